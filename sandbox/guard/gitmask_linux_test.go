package guard

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
	"golang.org/x/sys/unix"
)

func maskRoots(t *testing.T) (string, func() []protect.Root) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--template=", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return ws, func() []protect.Root {
		roots := []protect.Root{{Path: ws, Protected: []string{filepath.Join(ws, ".git")}}}
		protect.SplitGitDirs(roots)
		return roots
	}
}

// maskNames are the entries git init --template= leaves missing that get
// a placeholder.
var maskNames = []string{"commondir", "config.worktree", "hooks", "modules", "worktrees"}

func maskPaths(masks []gitMask) []string {
	var out []string
	for _, m := range masks {
		out = append(out, filepath.Base(m.path))
	}
	slices.Sort(out)
	return out
}

// Two runs share the placeholders: the first to end leaves them, the last
// removes them; neither touches one the user filled.
func TestGitMaskSharedAndRemovedByTheLast(t *testing.T) {
	ws, layout := maskRoots(t)
	git := filepath.Join(ws, ".git")
	hooks := filepath.Join(git, "hooks")
	a := mustHold(t, layout())
	b := mustHold(t, layout())
	if !slices.Equal(maskPaths(a), maskNames) || !slices.Equal(maskPaths(b), maskNames) {
		t.Fatalf("placeholders: %v %v", maskPaths(a), maskPaths(b))
	}
	if data, err := os.ReadFile(filepath.Join(git, "commondir")); err != nil || string(data) != ".\n" {
		t.Fatalf("commondir placeholder: %q %v", data, err)
	}
	// git reads the repository with them in place as it did without.
	if out, err := exec.Command("git", "-C", ws, "rev-parse", "--git-common-dir").CombinedOutput(); err != nil || filepath.Clean(strings.TrimSpace(string(out))) != git {
		t.Fatalf("git with the placeholders: %v %s", err, out)
	}
	releaseGitMasks(a)
	for _, n := range maskNames {
		if _, err := os.Lstat(filepath.Join(git, n)); err != nil {
			t.Fatalf("the first run to end removed the placeholder %s the other holds: %v", n, err)
		}
	}
	releaseGitMasks(b)
	for _, n := range maskNames {
		if _, err := os.Lstat(filepath.Join(git, n)); err == nil {
			t.Fatalf("the last run left the placeholder %s", n)
		}
	}
	// Twin: the user puts a hook in it during a run, and a submodule's git
	// dir in modules/.
	c := mustHold(t, layout())
	if err := os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(git, "modules", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	releaseGitMasks(c)
	for _, p := range []string{"hooks/pre-push", "modules/sub"} {
		if _, err := os.Lstat(filepath.Join(git, p)); err != nil {
			t.Fatalf("the user's %s went with the placeholder: %v", p, err)
		}
	}
	if got := maskPaths(mustHold(t, layout())); slices.Contains(got, "hooks") || slices.Contains(got, "modules") {
		t.Errorf("the user's hooks/ or modules/ taken for a placeholder: %v", got)
	}
}

// A placeholder is known by its mark and its content: the user's own
// commondir, or a marked file holding something else, is none.
func TestGitMaskKnownByMarkAndContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "commondir")
	kind := gitMasked["commondir"]
	if err := makeMaskFile(p, kind.content); err != nil {
		t.Fatal(err)
	}
	if !isGitMask(p, kind) {
		t.Fatal("a fresh placeholder is not known as one")
	}
	if err := makeMaskFile(p, kind.content); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("a second placeholder over the first: %v", err)
	}
	for _, c := range []struct {
		content string
		marked  bool
	}{{".\n", false}, {"../elsewhere\n", true}, {"", true}} {
		os.Remove(p)
		os.WriteFile(p, []byte(c.content), 0o644)
		if c.marked {
			os.Chtimes(p, gitMaskTime, gitMaskTime)
		}
		if isGitMask(p, kind) {
			t.Errorf("%q (marked %v) taken for a placeholder", c.content, c.marked)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("placeholders left temporary files: %v", entries)
	}
}

func mustHold(t *testing.T, roots []protect.Root) []gitMask {
	t.Helper()
	masks, err := holdGitMasks(roots)
	if err != nil {
		t.Fatal(err)
	}
	return masks
}

// An entry the user makes between the layout and the placeholders is
// theirs: no placeholder, held read-only as it is (not watched as missing,
// so never moved away), and the run goes on.
func TestGitMaskUserEntryMadeMeanwhileIsHeld(t *testing.T) {
	ws, layout := maskRoots(t)
	roots := layout()
	modules := filepath.Join(ws, ".git", "modules")
	if err := os.MkdirAll(filepath.Join(modules, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	masks := mustHold(t, roots)
	defer releaseGitMasks(masks)
	if slices.Contains(maskPaths(masks), "modules") {
		t.Fatalf("the user's modules/ taken for a placeholder")
	}
	for _, g := range roots[0].Git {
		if g.Path == modules && (g.Missing || g.Masked || g.Writable) {
			t.Errorf("the user's modules/ is not held read-only as theirs: %+v", g)
		}
	}
	if _, err := os.Lstat(filepath.Join(modules, "sub")); err != nil {
		t.Errorf("the user's modules/sub: %v", err)
	}
}

// Which missing entries get a placeholder: git's obeyed names, and a file
// the config includes at the top of the git dir; never one of git's state
// files, a file in a data directory, or a name the config does not include.
func TestGitMaskKindFor(t *testing.T) {
	ws, _ := maskRoots(t)
	git := filepath.Join(ws, ".git")
	cfg := "[include]\n\tpath = extra.cfg\n\tpath = ORIG_HEAD\n\tpath = refs/x.cfg\n[includeIf \"onbranch:main\"]\n\tpath = branch.cfg\n"
	f, err := os.OpenFile(filepath.Join(git, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(cfg)
	f.Close()
	for name, want := range map[string]bool{
		"hooks": true, "commondir": true, "modules": true, "worktrees": true, "config.worktree": true,
		"extra.cfg": true, "branch.cfg": true,
		"ORIG_HEAD": false, "refs/x.cfg": false, "other.cfg": false, "index": false,
	} {
		if _, got := maskKindFor(filepath.Join(git, name)); got != want {
			t.Errorf("%s: placeholder %v, want %v", name, got, want)
		}
	}
	if kind, _ := maskKindFor(filepath.Join(git, "modules")); !kind.dir {
		t.Error("modules/ placeholder is not a directory")
	}
}

// A git on the host that renames its own config.worktree (or any masked
// file) onto the placeholder's name just as the last run ends keeps it:
// the placeholder's removal never takes the file that replaced it. Twin:
// with nothing renamed there, the placeholder goes and nothing is left
// beside it.
func TestGitMaskReleaseKeepsAFileRenamedOntoIt(t *testing.T) {
	ws, layout := maskRoots(t)
	git := filepath.Join(ws, ".git")
	target := filepath.Join(git, "config.worktree")
	masks := mustHold(t, layout())
	beforeMaskRemoval = func(p string) {
		if p != target {
			return
		}
		lock := target + ".lock"
		if err := os.WriteFile(lock, []byte("[core]\n\tsparseCheckout = true\n"), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(lock, target); err != nil { // what git config --worktree does
			t.Error(err)
		}
	}
	defer func() { beforeMaskRemoval = nil }()
	releaseGitMasks(masks)
	if data, err := os.ReadFile(target); err != nil || !strings.Contains(string(data), "sparseCheckout") {
		t.Fatalf("the user's config.worktree renamed onto the placeholder was lost: %q %v", data, err)
	}
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	leftover := func() []string {
		ents, _ := os.ReadDir(git)
		var names []string
		for _, e := range ents {
			if strings.Contains(e.Name(), "warden") || slices.Contains(maskNames, e.Name()) {
				names = append(names, e.Name())
			}
		}
		return names
	}
	if left := leftover(); len(left) != 0 {
		t.Fatalf("left in the git dir after the run: %v", left)
	}

	beforeMaskRemoval = nil
	releaseGitMasks(mustHold(t, layout()))
	if left := leftover(); len(left) != 0 {
		t.Fatalf("twin: left in the git dir after the run: %v", left)
	}
}

// A run whose layout was read while another run's placeholders were there,
// and which holds them after that run released them, makes its own: the
// entries are gone, not the user's (they were refused as vanished in the
// helper, and each back-to-back run in a git workspace hit it once the
// release came after the report).
func TestGitMaskReleasedBetweenLayoutAndHold(t *testing.T) {
	ws, layout := maskRoots(t)
	first := mustHold(t, layout())
	roots := layout() // sees first's placeholders as entries
	releaseGitMasks(first)
	if _, err := os.Lstat(filepath.Join(ws, ".git", "modules")); err == nil {
		t.Fatal("the release left the placeholder")
	}
	masks := mustHold(t, roots)
	defer releaseGitMasks(masks)
	if !slices.Equal(maskPaths(masks), maskNames) {
		t.Fatalf("held %v, want %v", maskPaths(masks), maskNames)
	}
	for _, gp := range roots[0].Git {
		if base := filepath.Base(gp.Path); slices.Contains(maskNames, base) && !gp.Masked {
			t.Errorf("%s not held: %+v", base, gp)
		}
	}
}
