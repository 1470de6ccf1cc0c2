// Package pathmemo remembers, for one sandboxed run, what the file system
// said about each path: its Lstat, its link target and its resolution. The
// launcher resolves the same few directories (the home directory, /tmp, the
// workspace) once per protected or secret path and again in each consumer
// (roots, read policy, guard); a memo makes that one system call each.
//
// A Memo belongs to one run and must never outlive it: a symbolic link may
// change between runs. Within a run it is no weaker than resolving a path
// twice a few microseconds apart, which is what it replaces. Code that must
// see the file system after a moment (a watch taking hold, the command
// ending) calls Forget or does not use the memo.
//
// A nil *Memo is valid and remembers nothing: every call goes to the file
// system.
package pathmemo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Memo is safe for concurrent use.
type Memo struct {
	mu    sync.Mutex
	stat  map[string]statResult
	links map[string]linkResult
	real  map[string]linkResult // EvalSymlinks results
}

type statResult struct {
	info fs.FileInfo
	err  error
}

type linkResult struct {
	s   string
	err error
}

// New returns an empty memo for one run.
func New() *Memo {
	return &Memo{stat: map[string]statResult{}, links: map[string]linkResult{}, real: map[string]linkResult{}}
}

// Lstat is os.Lstat, remembered.
func (m *Memo) Lstat(p string) (fs.FileInfo, error) {
	if m == nil {
		return os.Lstat(p)
	}
	m.mu.Lock()
	r, ok := m.stat[p]
	m.mu.Unlock()
	if ok {
		return r.info, r.err
	}
	info, err := os.Lstat(p)
	m.mu.Lock()
	m.stat[p] = statResult{info, err}
	m.mu.Unlock()
	return info, err
}

func (m *Memo) readlink(p string) (string, error) {
	if m == nil {
		return os.Readlink(p)
	}
	m.mu.Lock()
	r, ok := m.links[p]
	m.mu.Unlock()
	if ok {
		return r.s, r.err
	}
	s, err := os.Readlink(p)
	m.mu.Lock()
	m.links[p] = linkResult{s, err}
	m.mu.Unlock()
	return s, err
}

// Forget drops what the memo knows about dir and everything below it (a
// clean absolute path), so the next look is at the file system: after a
// watch on dir took hold, or after the launcher made an entry there.
func (m *Memo) Forget(dir string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.links {
		if within(dir, p) {
			delete(m.links, p)
		}
	}
	for p := range m.stat {
		if within(dir, p) {
			delete(m.stat, p)
		}
	}
	// A resolution may have gone through dir by a link from anywhere:
	// resolutions are redone from the remembered Lstats, which is cheap.
	clear(m.real)
}

// EvalSymlinks is filepath.EvalSymlinks, with every Lstat and Readlink on
// the way remembered. Relative paths, rare here, are not remembered.
func (m *Memo) EvalSymlinks(p string) (string, error) {
	if m == nil || !filepath.IsAbs(p) {
		return filepath.EvalSymlinks(p)
	}
	m.mu.Lock()
	r, ok := m.real[p]
	m.mu.Unlock()
	if ok {
		return r.s, r.err
	}
	s, err := m.walk(p)
	m.mu.Lock()
	m.real[p] = linkResult{s, err}
	m.mu.Unlock()
	return s, err
}

// maxLinks bounds the links followed in one resolution, as the standard
// library does.
const maxLinks = 255

// walk resolves the absolute path p one component at a time, as
// filepath.EvalSymlinks does on Unix: a ".." drops the last resolved
// component, a relative link replaces the component that named it, an
// absolute one restarts from the root.
func (m *Memo) walk(p string) (string, error) {
	const sep = string(filepath.Separator)
	dest := sep
	rest := p
	links := 0
	for rest != "" {
		var part string
		var more bool // a separator follows part, as in "file/"
		rest = strings.TrimLeft(rest, sep)
		part, rest, more = strings.Cut(rest, sep)
		switch part {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, part)
		st, err := m.Lstat(next)
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if !st.IsDir() && more {
				return "", syscall.ENOTDIR
			}
			dest = next
			continue
		}
		if links++; links > maxLinks {
			return "", errors.New("EvalSymlinks: too many links")
		}
		target, err := m.readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			dest = sep
		}
		if more {
			target += sep + rest
		}
		rest = target
	}
	return filepath.Clean(dest), nil
}

// ResolveExisting resolves the symbolic links of p's longest existing
// prefix and names the rest as it would be created: a path that does not
// exist yet is named by where it would be made.
func (m *Memo) ResolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := m.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	return p == dir || dir == string(filepath.Separator) || strings.HasPrefix(p, dir+string(filepath.Separator))
}
