package patch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func prepare(t *testing.T, root, text string) *Plan {
	t.Helper()
	changes, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Prepare(changes, Disk{}, Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// A failure in the middle of the commit (the third rename) restores the two
// files already replaced and leaves no temporary files behind.
func TestDiskRollsBackAFailedCommit(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "gone.txt": "g\n"})
	before := snapshot(t, root)
	plan := prepare(t, root, `*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Add File: new/n.txt
+n
*** Update File: c.txt
@@
-c
+C
*** Delete File: gone.txt
*** End Patch`)
	calls := 0
	renameFile = func(from, to string) error {
		calls++
		if calls == 3 {
			return errors.New("disk full")
		}
		return os.Rename(from, to)
	}
	defer func() { renameFile = rename }()
	_, err := Disk{}.Apply(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "every file was restored") {
		t.Fatalf("err = %v", err)
	}
	if after := snapshot(t, root); len(after) != len(before) {
		t.Errorf("tree after rollback: %v, want %v", after, before)
	}
	assertSame(t, snapshot(t, root), before)
}

// A deletion that fails after every new file was renamed into place puts
// all of them back.
func TestDiskRollsBackAFailedDelete(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "a\n", "old.txt": "o\n", "gone.txt": "g\n"})
	before := snapshot(t, root)
	plan := prepare(t, root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: old.txt\n*** Move to: new/moved.txt\n@@\n-o\n+O\n*** Delete File: gone.txt\n*** End Patch")
	calls := 0
	removeFile = func(p string) error {
		calls++
		if calls == 2 {
			return errors.New("read-only file system")
		}
		return os.Remove(p)
	}
	defer func() { removeFile = os.Remove }()
	if _, err := (Disk{}).Apply(context.Background(), plan); err == nil || !strings.Contains(err.Error(), "every file was restored") {
		t.Fatalf("err = %v", err)
	}
	assertSame(t, snapshot(t, root), before)
}

func TestDiskRefusesFilesChangedSincePrepare(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "a\n"})
	plan := prepare(t, root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("user edit\n"), 0o644)
	if _, err := (Disk{}).Apply(context.Background(), plan); err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "user edit\n" {
		t.Errorf("a.txt = %q", data)
	}
}

func TestDiskKeepsModeAndSymlinks(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"run.sh": "echo a\n", "real.txt": "x\n"})
	os.Chmod(filepath.Join(root, "run.sh"), 0o750)
	os.Symlink("real.txt", filepath.Join(root, "link.txt"))
	plan := prepare(t, root, "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo b\n*** Update File: link.txt\n@@\n-x\n+y\n*** End Patch")
	if len(plan.Concerns) != 0 {
		t.Fatalf("concerns: %v", plan.Concerns)
	}
	if _, err := (Disk{}).Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(filepath.Join(root, "run.sh")); info.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v", info.Mode().Perm())
	}
	if target, err := os.Readlink(filepath.Join(root, "link.txt")); err != nil || target != "real.txt" {
		t.Errorf("symlink replaced: %q %v", target, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "real.txt")); string(data) != "y\n" {
		t.Errorf("real.txt = %q", data)
	}
}

func TestConcerns(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, root, map[string]string{"bin.dat": "a\x00b\n", "sub/.envrc": "x\n"})
	writeFiles(t, outside, map[string]string{"o.txt": "o\n"})
	os.Symlink(outside, filepath.Join(root, "escape"))
	cases := map[string]string{
		"*** Begin Patch\n*** Update File: escape/o.txt\n@@\n-o\n+p\n*** End Patch":                 "leads through a symlink outside the workspace",
		"*** Begin Patch\n*** Add File: " + filepath.Join(outside, "n.txt") + "\n+n\n*** End Patch": "is outside the workspace",
		"*** Begin Patch\n*** Update File: sub/.envrc\n@@\n-x\n+y\n*** End Patch":                   "is a protected path (.envrc)",
		"*** Begin Patch\n*** Add File: .vscode/tasks.json\n+{}\n*** End Patch":                     "is a protected path (.vscode)",
		"*** Begin Patch\n*** Delete File: bin.dat\n*** End Patch":                                  "is a binary file",
	}
	for text, want := range cases {
		plan := prepare(t, root, text)
		if len(plan.Concerns) != 1 || !strings.Contains(plan.Concerns[0].String(), want) {
			t.Errorf("%q: concerns %v, want %q", text, plan.Concerns, want)
		}
	}
	// With the outside directory as a writable root, it needs no approval.
	changes, _ := Parse("*** Begin Patch\n*** Add File: " + filepath.Join(outside, "n.txt") + "\n+n\n*** End Patch")
	plan, err := Prepare(changes, Disk{}, Options{Root: root, WritableRoots: []string{outside}})
	if err != nil || len(plan.Concerns) != 0 {
		t.Errorf("writable root: %v %v", err, plan.Concerns)
	}
	// Updating a binary file is refused outright.
	changes, _ = Parse("*** Begin Patch\n*** Update File: bin.dat\n@@\n-a\n+b\n*** End Patch")
	if _, err := Prepare(changes, Disk{}, Options{Root: root}); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary update: %v", err)
	}
}

func TestUndoRefusesEditedFilesUnlessForcedAndSurvivesRestart(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "a\n"})
	plan := prepare(t, root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** End Patch")
	if _, err := Apply(context.Background(), Disk{}, plan, NewCheckpoints(state)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("A\nuser line\n"), 0o644)

	restarted := NewCheckpoints(state) // a new server process reads the same state
	_, err := restarted.Undo(context.Background(), Disk{}, root, false)
	var edited *EditedSinceError
	if !errors.As(err, &edited) || len(edited.Files) != 1 || edited.Files[0] != "a.txt" {
		t.Fatalf("undo of an edited file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "A\nuser line\n" {
		t.Errorf("refused undo changed a.txt: %q", data)
	}
	if _, err := restarted.Undo(context.Background(), Disk{}, root, true); err != nil {
		t.Fatalf("forced undo: %v", err)
	}
	assertSame(t, snapshot(t, root), map[string]string{"a.txt": "a\n"})
	if _, err := restarted.Undo(context.Background(), Disk{}, root, false); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("second undo: %v", err)
	}
}

func assertSame(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

// An undo of a chmod that fails half-way gives the file its mode back
// (its content never changed, so the content alone cannot say it is
// rolled back); when nothing fails, the mode lands.
func TestDiskRollsBackAModeItChanged(t *testing.T) {
	for _, fail := range []bool{true, false} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"tool.sh": "#!/bin/sh\n", "b.txt": "b\n"})
		tool := filepath.Join(root, "tool.sh")
		if err := os.Chmod(tool, 0o755); err != nil {
			t.Fatal(err)
		}
		plan := prepare(t, root, "*** Begin Patch\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch")
		chmod := FileEdit{Change: &FileChange{Kind: Update, Path: "tool.sh"}, Path: tool, Rel: "tool.sh", Existed: true,
			Before: "#!/bin/sh\n", After: "#!/bin/sh\n", Mode: 0o644, SetsMode: true}
		plan.Files = append([]FileEdit{chmod}, plan.Files...)
		renameFile = func(from, to string) error {
			if fail && strings.HasSuffix(to, "b.txt") {
				return errors.New("disk full")
			}
			return os.Rename(from, to)
		}
		_, err := Disk{}.Apply(context.Background(), plan)
		renameFile = rename
		want := fs.FileMode(0o755)
		if !fail {
			want = 0o644
		}
		if fail != (err != nil) {
			t.Fatalf("fail=%v: err = %v", fail, err)
		}
		if fi, err := os.Stat(tool); err != nil || fi.Mode().Perm() != want {
			t.Errorf("fail=%v: tool.sh has mode %v (%v), want %v", fail, fi.Mode().Perm(), err, want)
		}
	}
}
