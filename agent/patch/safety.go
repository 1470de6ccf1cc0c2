package patch

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wardenhq/warden/sandbox/protect"
)

// guard resolves patch paths against the workspace and says which need approval.
type guard struct {
	protected []string            // absolute paths that need approval wherever they are
	held      func(string) string // the sandbox's read-only paths (Options.Held)
	root      string
	roots     []string // root and the writable roots, cleaned
	realRoots []string // the same with symlinks resolved
	mu        sync.Mutex
	realDirs  map[string]string
}

func newGuard(root string, writable []string) *guard {
	g := &guard{root: root, realDirs: map[string]string{}}
	for _, r := range append([]string{root}, writable...) {
		if !filepath.IsAbs(r) {
			r = filepath.Join(root, r)
		}
		r = filepath.Clean(r)
		g.roots = append(g.roots, r)
		g.realRoots = append(g.realRoots, realPath(r))
	}
	return g
}

// resolve turns a patch path into an absolute, cleaned path.
func (g *guard) resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", &RefusedError{Path: p, Reason: "empty path"}
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.root, p)
	}
	p = filepath.Clean(p)
	if p == g.root {
		return "", &RefusedError{Path: p, Reason: "names the workspace root, not a file"}
	}
	return p, nil
}

// rel shows a path relative to the root when it is inside it.
func (g *guard) rel(abs string) string {
	if r, ok := within(abs, g.root); ok {
		return filepath.ToSlash(r)
	}
	return abs
}

// check lists why a file change needs approval.
func (g *guard) check(f *FileEdit) []Concern {
	var out []Concern
	add := func(path, format string, a ...any) {
		out = append(out, Concern{Path: path, Rel: g.rel(path), Reason: fmt.Sprintf(format, a...)})
	}
	for _, p := range []string{f.Path, f.MoveTo} {
		if p == "" {
			continue
		}
		root, inside := g.containing(p, g.roots)
		if !inside {
			if strings.Contains(filepath.ToSlash(f.Change.Path)+"/"+filepath.ToSlash(f.Change.MoveTo), "..") {
				add(p, "escapes the workspace through '..' (it resolves to %s)", p)
			} else {
				add(p, "is outside the workspace and the writable roots")
			}
			continue
		}
		info, known := f.lstat, true
		if p == f.MoveTo {
			info = f.destLstat
			known = f.Change.Kind == Update // MoveTo was read only for updates
		}
		real := g.real(p, info, known)
		realRoot, realInside := g.containing(real, g.realRoots)
		if !realInside {
			add(p, "leads through a symlink outside the workspace, to %s", real)
			continue
		}
		if extra := g.protectedPath(p, real); extra != "" {
			add(p, "is inside %s, which Warden keeps read-only (configuration, state or code the host runs)", extra)
		} else if name := protectedPart(p, root); name != "" {
			add(p, "is a protected path (%s)", name)
		} else if name := protectedPart(real, realRoot); name != "" {
			add(p, "leads through a symlink to a protected path (%s)", name)
		} else if held := g.heldBy(p, real); held != "" {
			add(p, "is a protected path: the sandbox holds %s read-only (a home directory's dot-entries and the directories on PATH hold what the host runs)", held)
		}
	}
	if f.Existed && hasNUL(f.Before) {
		add(f.Path, "is a binary file the editor cannot show as a diff")
	}
	return out
}

// protectedPath returns the extra protected path that holds p (as written
// or resolved), or "".
func (g *guard) protectedPath(p, real string) string {
	for _, e := range g.protected {
		if _, ok := within(p, e); ok {
			return e
		}
		if _, ok := within(real, realPath(e)); ok {
			return e
		}
	}
	return ""
}

// heldBy is what the sandbox holds read-only that holds p, as written or
// resolved, or "".
func (g *guard) heldBy(p, real string) string {
	if g.held == nil {
		return ""
	}
	if h := g.held(p); h != "" {
		return h
	}
	return g.held(real)
}

// real resolves symlinks in p, resolving each directory once per patch.
func (g *guard) real(p string, info fs.FileInfo, known bool) string {
	if !known {
		info, _ = os.Lstat(p)
	}
	if info != nil && info.Mode()&fs.ModeSymlink != 0 {
		return realPath(p)
	}
	dir := filepath.Dir(p)
	g.mu.Lock()
	r, ok := g.realDirs[dir]
	g.mu.Unlock()
	if !ok {
		r = realPath(dir)
		g.mu.Lock()
		g.realDirs[dir] = r
		g.mu.Unlock()
	}
	return filepath.Join(r, filepath.Base(p))
}

// containing returns the first root that holds p.
func (g *guard) containing(p string, roots []string) (string, bool) {
	for _, r := range roots {
		if _, ok := within(p, r); ok {
			return r, true
		}
	}
	return "", false
}

// within reports whether p is root or below it, and the relative path.
func within(p, root string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// protectedPart returns the protected directory or file name in p below root.
func protectedPart(p, root string) string {
	rel, ok := within(p, root)
	if !ok {
		return ""
	}
	return protect.Rel(rel, os.Getenv)
}

// realPath resolves symlinks in the longest existing prefix of p, so a path
// that does not exist yet is judged by the directory it would be created in.
func realPath(p string) string { return realPathDepth(p, 0) }

func realPathDepth(p string, depth int) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		} else if _, lerr := os.Lstat(cur); lerr == nil && depth < 40 {
			// A dangling symlink: where it points is what a write would create.
			if target, err := os.Readlink(cur); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(cur), target)
				}
				return filepath.Join(realPathDepth(filepath.Clean(target), depth+1), rest)
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
