package pathmemo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/wardenhq/warden/internal/pathutil"
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
	r := remember(m, m.stat, p, func() statResult {
		info, err := os.Lstat(p)
		return statResult{info, err}
	})
	return r.info, r.err
}

func (m *Memo) readlink(p string) (string, error) {
	if m == nil {
		return os.Readlink(p)
	}
	r := remember(m, m.links, p, func() linkResult {
		s, err := os.Readlink(p)
		return linkResult{s, err}
	})
	return r.s, r.err
}

// remember returns cache[key], looking it up first when the memo has not
// yet. The lookup runs unlocked: two callers may both look, and either
// answer is one the file system gave during the run.
func remember[R any](m *Memo, cache map[string]R, key string, look func() R) R {
	m.mu.Lock()
	r, ok := cache[key]
	m.mu.Unlock()
	if ok {
		return r
	}
	r = look()
	m.mu.Lock()
	cache[key] = r
	m.mu.Unlock()
	return r
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
		if pathutil.Within(dir, p) {
			delete(m.links, p)
		}
	}
	for p := range m.stat {
		if pathutil.Within(dir, p) {
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
	r := remember(m, m.real, p, func() linkResult {
		s, err := m.walk(p)
		return linkResult{s, err}
	})
	return r.s, r.err
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
// exist yet is named by where it would be made. A prefix that cannot be
// looked up (unreadable, say) counts as missing.
func (m *Memo) ResolveExisting(p string) string {
	r, err := m.resolvePrefix(p, false)
	if err != nil {
		return p
	}
	return r
}

// ResolveExisting is Memo.ResolveExisting without a memo: every lookup
// goes to the filesystem.
func ResolveExisting(p string) string { return (*Memo)(nil).ResolveExisting(p) }

// ResolvePrefix is ResolveExisting failing closed: only a component that
// does not exist counts as missing. Any other error of a lookup is
// returned, and so is the error when no prefix of p exists.
func (m *Memo) ResolvePrefix(p string) (string, error) { return m.resolvePrefix(p, true) }

func (m *Memo) resolvePrefix(p string, strict bool) (string, error) {
	rest := ""
	for cur := p; ; {
		r, err := m.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(cur)
		if strict && !errors.Is(err, fs.ErrNotExist) || parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// LinkBelow returns the first symbolic link on the way from root down to
// p: p itself or a directory between them, shallowest first, root
// excluded ("" when there is none, or when the path stops existing before
// one). Whoever follows p goes through it, and whoever may write in root
// may replace it.
func (m *Memo) LinkBelow(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := m.Lstat(cur)
		if err != nil {
			return "" // missing from here down: nothing to follow
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return cur
		}
	}
	return ""
}
