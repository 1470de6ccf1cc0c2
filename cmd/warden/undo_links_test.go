//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// link makes rel a symbolic link to target in the workspace.
func (w *commandWorkspace) link(rel, target string) {
	w.t.Helper()
	p := filepath.Join(w.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		w.t.Fatal(err)
	}
}

// checkLink fails unless rel is a symbolic link to target.
func (w *commandWorkspace) checkLink(when, rel, target string) {
	w.t.Helper()
	p := filepath.Join(w.dir, rel)
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		w.t.Errorf("%s: %s should be a link to %s: %v %v", when, rel, target, fi, err)
		return
	}
	if got, _ := os.Readlink(p); got != target {
		w.t.Errorf("%s: %s links to %q, want %q", when, rel, got, target)
	}
}

// ATTACK: a command removes links (a committed one, an untracked one
// pointing outside the workspace) and retargets another with ln -sfn;
// undo must put each back as the link it was, to the same target, and
// remove the link the command made: none of them was recorded before.
func TestUndoRestoresRemovedAndRetargetedLinks(t *testing.T) {
	w := newCommandWorkspace(t)
	outside := t.TempDir()
	w.link("current", "src/a.go")
	w.git("add", "current")
	w.git("commit", "-qm", "link")
	w.link("latest", "src/edited.go")
	w.link("shared", outside)
	script := "rm current shared && ln -sfn README.md latest && ln -s src made-link"
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"deleted current, shared", "modified latest", "created made-link"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("exec's line should say %q:\n%s", want, stderr)
		}
	}
	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	w.checkLink("after undo", "current", "src/a.go")
	w.checkLink("after undo", "latest", "src/edited.go")
	w.checkLink("after undo", "shared", outside)
	if _, err := os.Lstat(filepath.Join(w.dir, "made-link")); !os.IsNotExist(err) {
		t.Errorf("the link the command made is still there: %v", err)
	}
	w.check("after undo")
}

// ATTACK: a command replaces a file with a link to a file outside the
// workspace; undo must put the file back in the workspace, as a file, and
// write nothing through the link (not even with --force, which the link
// must not need).
// TWIN: a link the command made that points outside is removed, and what
// it pointed at is left as it was.
func TestUndoNeverWritesThroughALink(t *testing.T) {
	for _, force := range []bool{false, true} {
		w := newCommandWorkspace(t)
		outside := t.TempDir()
		victim := filepath.Join(outside, "victim.txt")
		if err := os.WriteFile(victim, []byte("not the workspace's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		script := "rm README.md && ln -s " + victim + " README.md && ln -s " + victim + " pointer"
		if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", script); code != 0 {
			t.Fatalf("exec: exit %d\n%s", code, stderr)
		}
		args := []string{"undo", "--cwd", w.dir}
		if force {
			args = append(args, "--force")
		}
		stdout, stderr, code := runWarden(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
			continue
		}
		if data, _ := os.ReadFile(victim); string(data) != "not the workspace's\n" {
			t.Fatalf("%v wrote through a link, outside the workspace: %s holds %q", args, victim, data)
		}
		if fi, err := os.Lstat(filepath.Join(w.dir, "README.md")); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%v: README.md should be a file again: %v %v", args, fi, err)
		}
		w.check("after undo")
		if _, err := os.Lstat(filepath.Join(w.dir, "pointer")); !os.IsNotExist(err) {
			t.Errorf("%v: the link the command made is still there: %v", args, err)
		}
	}
}

// ATTACK: `rm -rf` of a directory that holds empty directories (one with
// its own mode) loses them: undo brought the files back, not the empty
// directories. Undo must put them back, with their modes.
func TestUndoRestoresEmptyDirectories(t *testing.T) {
	w := newCommandWorkspace(t)
	for rel, mode := range map[string]os.FileMode{"src/empty": 0o755, "src/cache/private": 0o700} {
		p := filepath.Join(w.dir, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "rm -rf src")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "deleted 6 files under src/") {
		t.Errorf("exec's line should count the empty directories:\n%s", stderr)
	}
	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	w.check("after undo")
	for rel, mode := range map[string]os.FileMode{"src/empty": 0o755, "src/cache/private": 0o700} {
		fi, err := os.Lstat(filepath.Join(w.dir, rel))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != mode {
			t.Errorf("%s should be a directory with mode %v again: %v %v", rel, mode, fi, err)
		}
	}
}

// ATTACK: a command that makes only empty directories was not recorded at
// all: undo said there was nothing to undo, and left them. It must name
// them, and undo must remove them, and the parents it made, and nothing
// that was there before.
// TWIN: a file the command wrote into a directory that was empty before
// goes, and the directory stays, empty, as it was.
func TestUndoRemovesTheEmptyDirectoriesACommandMade(t *testing.T) {
	w := newCommandWorkspace(t)
	if err := os.Mkdir(filepath.Join(w.dir, "out"), 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(w.dir, "out"), 0o750)
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "mkdir -p build/a/b src/new && echo x > out/made.txt")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"build/a/b/", "src/new/", "out/made.txt"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("exec's line should name %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "deleted") {
		t.Errorf("out/ was filled, not deleted:\n%s", stderr)
	}
	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, gone := range []string{"build", "src/new", "out/made.txt"} {
		if _, err := os.Lstat(filepath.Join(w.dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s should be gone after undo: %v", gone, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(w.dir, "out")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Errorf("out/ was there before the command and must stay, with mode 0750: %v %v", fi, err)
	}
	w.check("after undo")
}

// TWIN: a link the user retargets after the command is the user's: undo
// refuses, naming it, and leaves it; --force puts the command's back.
func TestUndoOfALinkRefusesOverTheUsersRetarget(t *testing.T) {
	w := newCommandWorkspace(t)
	w.link("latest", "src/edited.go")
	if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "ln", "-sfn", "README.md", "latest"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(w.dir, "latest"))
	w.link("latest", "src/a.go")
	_, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 1 || !strings.Contains(stderr, "latest") || !strings.Contains(stderr, "--force") {
		t.Fatalf("undo over the user's retarget: exit %d, %s", code, stderr)
	}
	w.checkLink("after a refused undo", "latest", "src/a.go")
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--force"); code != 0 {
		t.Fatalf("undo --force: exit %d, %s", code, stderr)
	}
	w.checkLink("after undo --force", "latest", "src/edited.go")
	w.check("after undo --force")
}
