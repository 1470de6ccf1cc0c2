package seatbelt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
)

// On a case-insensitive volume (a fake one: this machine's are
// case-sensitive) a root spelled /Users/Dev/Proj is rewritten as on disk,
// with its protected paths and git entries; what does not exist keeps its
// spelling.
func TestOnDiskRootsSpellRootsAsOnDisk(t *testing.T) {
	tree := map[string][]string{"/": {"Users"}, "/Users": {"dev"}, "/Users/dev": {"proj", "Proj-other"}, "/Users/dev/proj": {".git", "src"}}
	c := NewCaseLookup()
	c.list = func(dir string) ([]string, error) {
		for k, v := range tree {
			if strings.EqualFold(k, dir) {
				return v, nil
			}
		}
		return nil, os.ErrNotExist
	}
	c.same = func(a, b string) bool { return strings.EqualFold(a, b) }
	got := c.OnDiskRoots([]protect.Root{{Path: "/users/Dev/PROJ", Protected: []string{"/users/Dev/PROJ/.GIT", "/users/Dev/PROJ/.envrc"},
		Git: []protect.GitPath{{Path: "/users/Dev/PROJ/.Git", Writable: true}, {Path: "/users/Dev/PROJ/.Git/hooks"}}}})
	want := protect.Root{Path: "/Users/dev/proj", Protected: []string{"/Users/dev/proj/.git", "/Users/dev/proj/.envrc"},
		Git: []protect.GitPath{{Path: "/Users/dev/proj/.git", Writable: true}, {Path: "/Users/dev/proj/.git/hooks"}}}
	if got[0].Path != want.Path || !slices.Equal(got[0].Protected, want.Protected) || !slices.Equal(got[0].Git, want.Git) {
		t.Errorf("got %+v, want %+v", got[0], want)
	}
}

// On this (case-sensitive) volume a root spelled in another case than an
// existing directory is another, missing, directory: it is not rewritten
// to the existing one; an existing exact spelling stays.
func TestOnDiskCaseKeepsCaseSensitiveNames(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewCaseLookup()
	for _, p := range []string{filepath.Join(dir, "proj"), filepath.Join(dir, "Proj"), filepath.Join(dir, "proj", "missing", "x")} {
		if got := c.onDiskCase(p); got != p {
			t.Errorf("onDiskCase(%q) = %q", p, got)
		}
	}
}
