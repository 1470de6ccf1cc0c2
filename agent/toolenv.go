package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ToolEnv is what the tools act on: the workspace and the surroundings that
// lsp or cmd provide.
type ToolEnv struct {
	// Dir is the workspace root; relative paths are resolved against it.
	Dir string
	// Roots are the directories read_file and list_dir may read; empty
	// means Dir only.
	Roots   []string
	Runner  CommandRunner
	Patcher PatchApplier
	Files   FileReader
	// Reads decides what read_file, list_dir and forwarded editor text may
	// hand to the model (the sandbox's read policy, the user for secret
	// files); nil means the default policy with nobody to ask.
	Reads    ReadGate
	Observer Observer
}

// resolve makes path absolute and clean, and refuses it unless it lies in a
// readable root. Symbolic links are followed first, so a link inside the
// workspace cannot lead outside it.
func (e *ToolEnv) resolve(path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fmt.Errorf("path is empty")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Dir, path)
	}
	path = filepath.Clean(path)
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	roots := e.Roots
	if len(roots) == 0 {
		roots = []string{e.Dir}
	}
	// Both the path as written and where its links lead must be inside.
	if inRoots(path, roots) && inRoots(real, roots) {
		return path, nil
	}
	return "", fmt.Errorf("%s is outside the readable roots (%s); read only files in the workspace", path, strings.Join(roots, ", "))
}

func inRoots(path string, roots []string) bool {
	for _, root := range roots {
		if within(path, root) || within(path, evalOr(root)) {
			return true
		}
	}
	return false
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	rel, err := filepath.Rel(filepath.Clean(root), path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (e *ToolEnv) observer() Observer {
	if e.Observer == nil {
		return nopObserver{}
	}
	return e.Observer
}

func (e *ToolEnv) files() FileReader {
	if e.Files == nil {
		return DiskFiles{}
	}
	return e.Files
}

func (e *ToolEnv) workdir(dir string) (string, error) {
	if dir == "" {
		return e.Dir, nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.Dir, dir)
	}
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %s: %v", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workdir %s is not a directory", dir)
	}
	return dir, nil
}
