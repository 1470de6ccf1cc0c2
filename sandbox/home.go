package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/homeentry"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
)

// Policy.HomeWritable: the home directory's entries that stay writable where
// a writable root holds it (home_held.go keeps the others read-only).

func validateHomeWritable(entries []string) error {
	for _, e := range entries {
		if _, err := homeentry.Clean(e); err != nil {
			return err
		}
	}
	return nil
}

// homeDir is the home directory, links resolved, or "" when there is none.
func (p Policy) homeDir(m *pathmemo.Memo) string {
	h := p.home()
	if h == "" {
		return ""
	}
	if real, err := m.EvalSymlinks(h); err == nil {
		return real
	}
	return ""
}

// homeWritableRoots are the HomeWritable entries deeper than the top (such
// as .cache/foo) that exist, as writable roots nested in the read-only
// dot-entry above them; those of one part simply stay unheld. Only when a
// worked root holds the home directory.
func (p Policy) homeWritableRoots(home string, worked []string, m *pathmemo.Memo) []string {
	if home == "" || !slices.ContainsFunc(worked, func(w string) bool { return pathutil.Within(w, home) }) {
		return nil
	}
	var out []string
	for _, e := range p.HomeWritable {
		c, err := homeentry.Clean(e)
		if err != nil || !strings.ContainsRune(c, filepath.Separator) {
			continue
		}
		if rp, err := resolveDir(filepath.Join(home, c), m); err == nil && pathutil.Within(home, rp) {
			out = append(out, rp)
		}
	}
	return out
}
