//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ATTACK: the sandbox reports each path a command changes, so a command
// that changes a workspace file through a name outside the workspace (a
// hard link in the shared /tmp: the sandbox's mounts refuse to make one,
// but an earlier unsandboxed run or the user may have) would leave no
// trace in the record: undo then says nothing to undo, and the file is
// lost. The write must be recorded as a change of the workspace file.
// TWIN: a write to an unrelated file in /tmp records nothing.
func TestUndoRestoresAFileWrittenThroughAHardLinkOutside(t *testing.T) {
	w := newCommandWorkspace(t)
	outside := t.TempDir()
	alias := filepath.Join(outside, "alias")
	if err := os.Link(filepath.Join(w.dir, "src/edited.go"), alias); err != nil {
		t.Skipf("the workspace and the temporary directory are on different file systems: %v", err)
	}
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "echo evil > "+alias+"; echo fine > "+filepath.Join(outside, "plain"))
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(w.dir, "src/edited.go")); string(data) != "evil\n" {
		t.Fatalf("the write through the link should have changed the workspace file: %q", data)
	}
	if !strings.Contains(stderr, "modified src/edited.go") || strings.Contains(stderr, "plain") {
		t.Errorf("the outcome line should name the workspace file, and only it:\n%s", stderr)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	w.check("after undo")
}

// Two names of one file in the workspace: a write through one changes
// both, and undo brings both back.
func TestUndoRestoresEveryNameOfAHardLinkedFile(t *testing.T) {
	w := newCommandWorkspace(t)
	if err := os.Link(filepath.Join(w.dir, "src/untracked.bin"), filepath.Join(w.dir, "twin.bin")); err != nil {
		t.Fatal(err)
	}
	w.want["twin.bin"], w.mode["twin.bin"] = w.want["src/untracked.bin"], w.mode["src/untracked.bin"]
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "echo changed >> src/untracked.bin")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "twin.bin") {
		t.Errorf("the outcome line should name the other name too:\n%s", stderr)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	w.check("after undo")
}

// ATTACK: a command makes d/x, then puts a link to a directory outside the
// workspace in d's place. Looked at through the link, d/x is the outside
// directory's x: the record said "created d, d/x", and undo, asked to
// remove d/x, refused for good (or, without its own check, would have
// removed the outside file). The record must hold the link d alone.
// TWIN: the same command without the swap records d/x (the other tests).
func TestUndoOfADirectoryReplacedByALinkLeavesTheOutsideAlone(t *testing.T) {
	w := newCommandWorkspace(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "x")
	if err := os.WriteFile(victim, []byte("not the workspace's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "mkdir d && echo mine > d/x && rm -rf d && ln -s "+outside+" d")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "d/x") || !strings.Contains(stderr, "created d") {
		t.Errorf("the outcome should name the link d alone:\n%s", stderr)
	}
	if stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "not the workspace's\n" {
		t.Fatalf("undo touched the file outside: %q %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(w.dir, "d")); !os.IsNotExist(err) {
		t.Errorf("undo should have removed the link d: %v", err)
	}
	w.check("after undo")
}

// A command that rewrites a whole repository (a formatter over 100
// committed files): past the first files, Warden takes the committed ones
// from git rather than copying them, and undo brings every one back.
func TestUndoOfACommandThatRewritesEveryFile(t *testing.T) {
	w := newCommandWorkspace(t)
	for i := range 100 {
		w.file(fmt.Sprintf("gen/f%03d.go", i), fmt.Sprintf("package gen // %03d\n", i), 0o644)
	}
	w.git("add", ".")
	w.git("commit", "-qm", "gen")
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", `for f in gen/*.go; do echo "package gen // formatted" > "$f"; done`)
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "modified 100 files") || strings.Contains(stderr, "not committed") {
		t.Errorf("the outcome should count 100 committed files modified:\n%s", stderr)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	w.check("after undo")
}
