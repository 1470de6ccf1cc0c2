package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// HeldBy is the sandbox's answer, for a writer outside it (the patch
// guard), to whether it holds a path read-only: it returns the held path
// that holds path, "" when the sandbox would let a command write there. The
// policy is taken as workspace-write over its workspace and configured
// roots (the temporary directories and caches aside), so the answer is the
// same under every sandbox mode: what a command could not plant, a patch
// does not plant unasked. A root that does not exist is left out: the
// sandbox skips it too.
//
// Held are the roots' protected paths (Roots: the protected names, the
// ProtectedPaths, a home directory's dot-entries and the PATH directories in
// a root), a root nested in one writable again as the sandbox reopens it;
// and at the top of a home directory in a root, a dot-entry that does not
// exist yet (home_writable aside), which the sandbox would move away once a
// command made it. When the roots cannot be resolved every path is held,
// with the reason. A path is judged as written and with its links resolved.
func (p Policy) HeldBy() func(path string) string {
	p.Mode = WorkspaceWrite
	p.ExcludeTmpdir, p.ExcludeSlashTmp = true, true
	p.Caches = toolcache.Caches{}
	p.Workspace, p.WritableRoots = existing(p.Workspace), existing(p.WritableRoots)
	roots, err := p.Roots()
	if err != nil {
		why := fmt.Sprintf("what the sandbox holds read-only cannot be worked out (%v)", err)
		return func(string) string { return why }
	}
	return func(path string) string {
		path = filepath.Clean(path)
		if h := heldIn(roots, path); h != "" {
			return h
		}
		return heldIn(roots, pathmemo.ResolveExisting(path)) // roots are resolved
	}
}

// heldIn is HeldBy's answer from the resolved roots: the deepest of the
// roots and their protected paths that holds path decides (a root nested
// in a protected path is writable, a protected path nested in it held
// again, as the mounts nest); a root and a protected path at the same place
// make it a root.
func heldIn(roots []protect.Root, path string) string {
	deepest, held := "", ""
	var home *protect.HomeTop
	for _, r := range roots {
		if pathutil.Within(r.Path, path) && len(r.Path) >= len(deepest) {
			deepest, held = r.Path, ""
		}
		for _, prot := range r.Protected {
			if pathutil.Within(prot, path) && len(prot) > len(deepest) {
				deepest, held = prot, prot
			}
		}
		if r.Home != nil {
			home = r.Home
		}
	}
	if held != "" || deepest == "" || home == nil || !pathutil.Within(deepest, home.Dir) || path == home.Dir {
		return held
	}
	rel, _ := filepath.Rel(home.Dir, path)
	top := strings.Split(rel, string(filepath.Separator))[0]
	if strings.HasPrefix(top, ".") && !home.Allows(top) {
		return filepath.Join(home.Dir, top)
	}
	return ""
}

// existing leaves out the paths that do not exist.
func existing(paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		_, err := os.Stat(p)
		return errors.Is(err, fs.ErrNotExist)
	})
}
