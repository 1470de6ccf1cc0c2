package pathmemo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// tree builds a directory with the shapes resolution must get right and
// returns the paths to resolve: plain entries, relative and absolute links,
// chains, links with "..", dangling links, a loop, a path through a file,
// missing names below each, and an unreadable directory.
func tree(t *testing.T) []string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/b/c")
	mk("home/.config")
	file("a/b/file")
	file("home/.bashrc")
	link("b", "a/rel")                                // relative, same dir
	link(filepath.Join(root, "a", "b", "c"), "a/abs") // absolute
	link("../a/rel", "home/chain")                    // relative with "..", to a link
	link("chain/c/../file", "home/dotdot")            // ".." after a link: lexical on the resolved path
	link("nowhere", "home/dangling")                  // dangling
	link(filepath.Join(root, "loop2"), "loop1")       // loop
	link(filepath.Join(root, "loop1"), "loop2")       //
	link("../b/file", "a/b/c/tofile")                 // link to a file
	link(filepath.Join(root, "home"), "homelink")     // a linked home, as on some systems
	link(".", "a/self")                               // link to its own directory
	mk("locked/inner")
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })

	var out []string
	for _, p := range []string{
		"", "a", "a/b", "a/b/c", "a/b/file", "a/b/file/x", "a/b/file/", "a/rel", "a/rel/c", "a/rel/file",
		"a/abs", "a/abs/../file", "a/abs/tofile", "a/abs/tofile/x", "home", "home/.bashrc", "home/.zshrc",
		"home/.config/nvim/init.lua", "home/chain", "home/chain/c", "home/dotdot", "home/dangling",
		"home/dangling/x", "loop1", "loop1/x", "homelink/.bashrc", "homelink/.ssh/config", "homelink/chain/file",
		"a/self/self/b", "a/b/../rel/c", "locked", "locked/inner", "locked/inner/x", "missing", "missing/deeper/still",
	} {
		out = append(out, filepath.Join(root, p))
	}
	out = append(out, root+"/a/b/", root+"/a/b/file/", root+"/a/abs/tofile/", root+"//a//rel", "/", "/proc/self/cwd")
	return out
}

func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for _, target := range []error{fs.ErrNotExist, fs.ErrPermission, syscall.ENOTDIR, syscall.ELOOP} {
		if errors.Is(a, target) != errors.Is(b, target) {
			return false
		}
	}
	return true
}

func TestEvalSymlinksEqualsTheStandardLibrary(t *testing.T) {
	paths := tree(t)
	m := New()
	for pass := range 2 { // the second pass answers from the memo
		for _, p := range paths {
			want, wantErr := filepath.EvalSymlinks(p)
			got, err := m.EvalSymlinks(p)
			if got != want || !sameError(err, wantErr) {
				t.Errorf("pass %d: EvalSymlinks(%s) = %q, %v; the standard library says %q, %v", pass, p, got, err, want, wantErr)
			}
			if got, want := m.ResolveExisting(p), ResolveExisting(p); got != want {
				t.Errorf("pass %d: ResolveExisting(%s) = %q, want %q", pass, p, got, want)
			}
			wantSt, wantErr := os.Lstat(p)
			st, err := m.Lstat(p)
			if !sameError(err, wantErr) || (err == nil && !os.SameFile(st, wantSt)) {
				t.Errorf("pass %d: Lstat(%s) differs from os.Lstat", pass, p)
			}
		}
	}
}

func TestNilMemoGoesToTheFileSystem(t *testing.T) {
	var m *Memo
	dir := t.TempDir()
	p := filepath.Join(dir, "later")
	if _, err := m.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lstat of a missing path: %v", err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lstat(p); err != nil {
		t.Fatalf("a nil memo remembered: %v", err)
	}
	if got, want := m.ResolveExisting(filepath.Join(p, "x")), ResolveExisting(filepath.Join(p, "x")); got != want {
		t.Fatalf("ResolveExisting = %q, want %q", got, want)
	}
	m.Forget(dir) // must not panic
}

// A memo is one run's: the next run's memo sees a link changed in between,
// and within a run only Forget makes the memo look again.
func TestMemoIsPerRunAndForgetLooksAgain(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, d := range []string{one, two} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := filepath.Join(dir, "ln")
	if err := os.Symlink(one, ln); err != nil {
		t.Fatal(err)
	}
	first := New()
	if got, _ := first.EvalSymlinks(filepath.Join(ln, "x")); got != "" {
		t.Fatalf("a missing name resolved to %q", got)
	}
	if got := first.ResolveExisting(filepath.Join(ln, "x")); got != filepath.Join(one, "x") {
		t.Fatalf("first run: %q", got)
	}

	// Between runs the link is pointed elsewhere and the name made.
	if err := os.Remove(ln); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(two, ln); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(two, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := New()
	if got, err := second.EvalSymlinks(filepath.Join(ln, "x")); err != nil || got != filepath.Join(two, "x") {
		t.Fatalf("second run: %q, %v; want the new target", got, err)
	}
	// The first run's memo still answers from its own moment...
	if got := first.ResolveExisting(filepath.Join(ln, "x")); got != filepath.Join(one, "x") {
		t.Fatalf("the first memo changed without Forget: %q", got)
	}
	// ...until told to look again.
	first.Forget(dir)
	if got, err := first.EvalSymlinks(filepath.Join(ln, "x")); err != nil || got != filepath.Join(two, "x") {
		t.Fatalf("after Forget: %q, %v", got, err)
	}
}

// Forget of a directory drops what is below it and only that.
func TestForgetDropsOnlyTheSubtree(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "ab")
	m := New()
	for _, p := range []string{a, b} {
		if _, err := m.Lstat(filepath.Join(p, "x")); err == nil {
			t.Fatal("x exists already")
		}
	}
	for _, p := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.Forget(a)
	if _, err := m.Lstat(filepath.Join(a, "x")); err != nil {
		t.Errorf("after Forget(%s) its entry is still missing: %v", a, err)
	}
	if _, err := m.Lstat(filepath.Join(b, "x")); err == nil {
		t.Errorf("Forget(%s) dropped the sibling %s, which shares its name as a prefix", a, b)
	}
}

// LinkBelow finds a link at p or between root and p, not root itself, and
// stops where the path stops existing.
func TestLinkBelow(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", filepath.Join(root, "a", "f")); err != nil {
		t.Fatal(err)
	}
	linkedRoot := filepath.Join(base, "linkedroot")
	if err := os.Symlink(root, linkedRoot); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Memo{nil, New()} {
		for p, want := range map[string]string{
			filepath.Join(root, "a", "b", "x"):    "",
			filepath.Join(root, "link", "b", "x"): filepath.Join(root, "link"),
			filepath.Join(root, "a", "f"):         filepath.Join(root, "a", "f"),
			filepath.Join(root, "missing", "x"):   "",
			root:                                  "",
			base:                                  "",
		} {
			if got := m.LinkBelow(root, p); got != want {
				t.Errorf("LinkBelow(%s) = %q, want %q", p, got, want)
			}
		}
		if got := m.LinkBelow(linkedRoot, filepath.Join(linkedRoot, "a")); got != "" {
			t.Errorf("the root itself counted: %q", got)
		}
	}
}
