package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// lookPath resolves argv0 the way Windows would, against the child's PATH:
// a name without an extension gets each of PATHEXT's; the working directory
// is not searched unless argv0 names a path.
func lookPath(argv0, cwd, pathEnv string) (string, error) {
	if strings.ContainsAny(argv0, `/\:`) {
		full := argv0
		if !filepath.IsAbs(full) {
			full = filepath.Join(cwd, full)
		}
		if found, ok := withExtension(full); ok {
			return found, nil
		}
		return "", errors.New("no such file")
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if found, ok := withExtension(filepath.Join(dir, argv0)); ok {
			return found, nil
		}
	}
	return "", errors.New("command not found")
}

// withExtension finds the regular file path names, as is when it has an
// extension, else with each executable extension in PATHEXT's order.
func withExtension(path string) (string, bool) {
	candidates := []string{}
	if filepath.Ext(path) != "" {
		candidates = append(candidates, path)
	}
	for _, ext := range executableExtensions() {
		candidates = append(candidates, path+ext)
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}

func executableExtensions() []string {
	pathext := os.Getenv("PATHEXT")
	if pathext == "" {
		pathext = ".com;.exe;.bat;.cmd"
	}
	var exts []string
	for _, e := range strings.Split(strings.ToLower(pathext), ";") {
		if strings.HasPrefix(e, ".") {
			exts = append(exts, e)
		}
	}
	return exts
}
