package seatbelt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/sandbox/protect"
)

// A workspace opened as /Users/me/Proj on a case-insensitive volume is
// /Users/me/proj on disk, and Seatbelt may see either spelling. The denies
// do not care (they match every spelling, foldRegex); the allows are exact,
// so a root, its protected paths and its git entries are rewritten with the
// spelling on disk where it can be found, or writes the user meant to allow
// would be refused. Where it cannot be found the path stays as given: the
// allow may then miss (refused writes), the denies still hold.

// caseLookup reads directories for onDiskCase, each at most once.
type caseLookup struct {
	names map[string][]string
	// list and same are os-backed; tests replace them with a fake
	// case-insensitive volume (Linux volumes here are case-sensitive).
	list func(dir string) ([]string, error)
	same func(a, b string) bool
}

func NewCaseLookup() *caseLookup {
	return &caseLookup{
		names: map[string][]string{},
		list: func(dir string) ([]string, error) {
			f, err := os.Open(dir)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return f.Readdirnames(-1)
		},
		same: func(a, b string) bool {
			fa, err := os.Lstat(a)
			if err != nil {
				return false
			}
			fb, err := os.Lstat(b)
			return err == nil && os.SameFile(fa, fb)
		},
	}
}

// onDiskCase spells each existing component of the absolute path as its
// directory lists it: the name itself when listed, else the one listed
// name that differs only in letter case and is the same file. The first
// component that is neither (missing, unreadable, ambiguous) and those after
// it stay as given.
func (c *caseLookup) onDiskCase(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	comps := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	out := "/"
	for i, comp := range comps {
		if comp == "" {
			continue
		}
		names, ok := c.names[out]
		if !ok {
			names, _ = c.list(out)
			c.names[out] = names
		}
		if slices.Contains(names, comp) {
			out = filepath.Join(out, comp)
			continue
		}
		var match []string
		for _, n := range names {
			if strings.EqualFold(n, comp) && c.same(filepath.Join(out, n), filepath.Join(out, comp)) {
				match = append(match, n)
			}
		}
		if len(match) != 1 {
			return filepath.Join(append([]string{out}, comps[i:]...)...)
		}
		out = filepath.Join(out, match[0])
	}
	return out
}

// OnDiskRoots is roots with every path spelled as on disk (a copy: the
// caller's roots are not changed).
func (c *caseLookup) OnDiskRoots(roots []protect.Root) []protect.Root {
	fix := func(paths []string) []string {
		if paths == nil {
			return nil
		}
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = c.onDiskCase(p)
		}
		return out
	}
	out := make([]protect.Root, len(roots))
	for i, r := range roots {
		r.Path = c.onDiskCase(r.Path)
		r.Protected = fix(r.Protected)
		r.Missing = fix(r.Missing)
		r.Found = fix(r.Found)
		if r.Git != nil {
			git := slices.Clone(r.Git)
			for j := range git {
				git[j].Path = c.onDiskCase(git[j].Path)
			}
			r.Git = git
		}
		out[i] = r
	}
	return out
}
