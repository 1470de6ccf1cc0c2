package patch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/changes"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func writeMode(t *testing.T, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

// What a command deleted and wrote in a git workspace is undone through
// the same Undo as a patch: committed, edited and untracked files come back
// byte for byte with their modes, the file it created goes, and a second
// undo says it was undone already.
func TestUndoCommandCheckpoint(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	gitRun(t, root, "init", "-q")
	writeMode(t, root, "src/a.go", "package a\n", 0o644)
	writeMode(t, root, "src/tool.sh", "#!/bin/sh\n", 0o755)
	writeMode(t, root, "src/edited.go", "package edited\n", 0o644)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-qm", "init")
	writeMode(t, root, "src/edited.go", "package edited // not committed\r\n", 0o600)
	writeMode(t, root, "src/untracked.bin", "\x00\x01\xff", 0o640)
	future := time.Now().Add(5 * time.Second)
	os.Chtimes(filepath.Join(root, ".git", "index"), future, future)
	want := map[string]string{"src/a.go": "package a\n", "src/tool.sh": "#!/bin/sh\n", "src/edited.go": "package edited // not committed\r\n", "src/untracked.bin": "\x00\x01\xff"}
	wantMode := map[string]os.FileMode{"src/a.go": 0o644, "src/tool.sh": 0o755, "src/edited.go": 0o600, "src/untracked.bin": 0o640}

	cps := NewCheckpoints(t.TempDir())
	rec := &changes.Recorder{Store: cps.Store()}
	run := rec.Begin([]string{root})
	os.RemoveAll(filepath.Join(root, "src"))
	writeMode(t, root, "build/out.txt", "made by the command\n", 0o644)
	ch := run.Finish()[0]
	if _, err := cps.RecordCommand(ch, "`rm -rf src`: "+ch.String()); err != nil {
		t.Fatal(err)
	}

	res, err := cps.Undo(context.Background(), Disk{}, root, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() {
		t.Fatalf("undo incomplete: %s", res)
	}
	for rel, content := range want {
		p := filepath.Join(root, rel)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			t.Errorf("%s: %q, %v; want %q", rel, data, err, content)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != wantMode[rel] {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), wantMode[rel])
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "build")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the created file and its directory should be gone: %v", err)
	}
	if _, err := cps.Undo(context.Background(), Disk{}, root, false); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("second undo: %v, want nothing to undo", err)
	}
}

// Undo refuses, naming the file, when the user edited what the command
// wrote; force reverts it anyway.
func TestUndoCommandEditedSince(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	writeMode(t, root, "notes.txt", "mine\n", 0o644)
	cps := NewCheckpoints(t.TempDir())
	rec := &changes.Recorder{Store: cps.Store()}
	run := rec.Begin([]string{root})
	writeMode(t, root, "notes.txt", "the command's\n", 0o644)
	ch := run.Finish()[0]
	cps.RecordCommand(ch, "`sed`: "+ch.String())
	writeMode(t, root, "notes.txt", "the user's edit after\n", 0o644)

	_, err := cps.Undo(context.Background(), Disk{}, root, false)
	var edited *EditedSinceError
	if !errors.As(err, &edited) || len(edited.Files) != 1 || edited.Files[0] != "notes.txt" {
		t.Fatalf("undo over an edit: %v, want EditedSinceError naming notes.txt", err)
	}
	if _, err := cps.Undo(context.Background(), Disk{}, root, true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(data) != "mine\n" {
		t.Errorf("forced undo left %q", data)
	}
}

// Two recorded changes, a patch-like command and another, are undone one
// step at a time, newest first.
func TestUndoCommandSteps(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	writeMode(t, root, "f", "v1\n", 0o644)
	cps := NewCheckpoints(t.TempDir())
	rec := &changes.Recorder{Store: cps.Store()}
	for _, v := range []string{"v2\n", "v3\n"} {
		run := rec.Begin([]string{root})
		writeMode(t, root, "f", v, 0o644)
		ch := run.Finish()[0]
		if _, err := cps.RecordCommand(ch, "write "+v); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // checkpoint names are timestamps
	}
	for _, want := range []string{"v2\n", "v1\n"} {
		if _, err := cps.Undo(context.Background(), Disk{}, root, false); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(filepath.Join(root, "f")); string(data) != want {
			t.Fatalf("after an undo step: %q, want %q", data, want)
		}
	}
}

// The store stays under its bound: the content no recorded change needs
// goes first, then the oldest changes' content, oldest first.
func TestTrimStoreEvictsOldestFirst(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	cps := NewCheckpoints(t.TempDir())
	rec := &changes.Recorder{Store: cps.Store()}
	var ids []string
	for i, size := range []int{4000, 3000, 2000} {
		name := filepath.Join(root, "f"+string(rune('a'+i)))
		os.WriteFile(name, make([]byte, size), 0o644)
		run := rec.Begin([]string{root})
		os.Remove(name)
		cp, err := cps.RecordCommand(run.Finish()[0], "rm")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
		time.Sleep(time.Millisecond)
	}
	// Nothing names a blob any more once no checkpoint does; the grace
	// for blobs a run may still record is a minute: age them.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(cps.Store().Dir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	os.RemoveAll(filepath.Join(cps.Store().Dir(), "stat")) // the next snapshot's base counts as needed

	if size := cps.TrimStore(6000); size > 6000 {
		t.Fatalf("store holds %d bytes, over the 6000 asked", size)
	}
	history, _ := cps.History(root, 0)
	var left []string
	for _, cp := range history {
		left = append(left, cp.ID)
	}
	if len(left) != 2 || left[0] != ids[2] || left[1] != ids[1] {
		t.Errorf("left %v, want the two newest %v", left, ids[1:])
	}
}
