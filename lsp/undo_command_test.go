package lsp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
)

// gitWorkspace writes files into dir and commits them, then writes the
// uncommitted ones over (or beside) them.
func gitWorkspace(t *testing.T, dir string, committed, uncommitted map[string]string) {
	t.Helper()
	write(t, dir, committed)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "gc.auto=0", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write(t, dir, uncommitted)
}

// Through warden serve, a plain client (eglot: no progress, no resource
// operations) runs `rm -rf src` with warden.exec: the outcome says what it
// deleted; the server is then killed, and warden.undo in a new server
// brings back the committed, edited and untracked files and removes what
// the command made.
func TestServeUndoesACommandAfterARestart(t *testing.T) {
	dir := t.TempDir()
	state := t.TempDir()
	committed := map[string]string{"src/a.go": "package a\n", "src/b.go": "package b\n", "README.md": "# r\n"}
	uncommitted := map[string]string{"src/b.go": "package b // edited\n", "src/new.txt": "untracked\n"}
	gitWorkspace(t, dir, committed, uncommitted)
	start := func() *lsptest.Client {
		c := lsptest.Start(t, lsptest.Options{Dir: dir, Env: []string{"XDG_STATE_HOME=" + state}})
		c.InitializeWith(map[string]any{
			"processId": os.Getpid(), "clientInfo": map[string]string{"name": "Eglot", "version": "1.9"},
			"rootUri": textdoc.PathToURI(dir), "capabilities": lsptest.EglotCapabilities(),
			"workspaceFolders": []map[string]any{{"uri": textdoc.PathToURI(dir), "name": "ws"}},
		})
		ed := newFakeEditor(t, c)
		ed.eglot = true
		return c
	}
	c := start()
	mark := c.Mark()
	startJob(t, c, "warden.exec", map[string]any{"command": "rm -rf src && echo made > made.txt"})
	msg := shown(t, c, mark, "exited 0")
	if !strings.Contains(msg, "deleted src/a.go, src/b.go, src/new.txt (2 not committed); created made.txt") {
		t.Errorf("exec outcome: %q", msg)
	}
	if p, err := os.FindProcess(c.Pid()); err == nil {
		p.Kill() // SIGKILL: no chance to tidy up
	}
	c.WaitExit()

	c = start()
	mark = c.Mark()
	startJob(t, c, "warden.undo")
	if msg := shown(t, c, mark, "Undoing"); !strings.Contains(msg, "undid `rm -rf src && echo made > made.txt`") {
		t.Fatalf("undo outcome: %q", msg)
	}
	for rel, want := range map[string]string{"src/a.go": "package a\n", "src/b.go": "package b // edited\n", "src/new.txt": "untracked\n", "README.md": "# r\n"} {
		if got, ok := fileText(t, filepath.Join(dir, rel)); !ok || got != want {
			t.Errorf("%s after undo = %q, %v; want %q", rel, got, ok, want)
		}
	}
	if _, ok := fileText(t, filepath.Join(dir, "made.txt")); ok {
		t.Error("made.txt survived the undo")
	}
}

// With an editor that reviews patches (resource operations, annotations),
// the undo of each command is one workspace/applyEdit the user confirms,
// like a patch's, and lands in the editor's buffers (unsaved, as a
// patch's does); two commands are undone with steps.
func TestServeUndoOfACommandIsReviewedLikeAPatch(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	write(t, c.Dir, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep\n"})
	for _, script := range []string{"rm notes.txt", "echo changed > keep.txt"} {
		if msg := runPatchJob(t, c, "warden.exec", map[string]any{"command": script}); !strings.Contains(msg, "exited 0") {
			t.Fatalf("exec %s: %q", script, msg)
		}
	}
	edits := len(ed.edits)
	if msg := runPatchJob(t, c, "warden.undo", map[string]any{"steps": 2}); strings.Count(msg, "undid") != 2 {
		t.Fatalf("undo 2 steps: %q", msg)
	}
	if len(ed.edits) != edits+2 {
		t.Errorf("each undo step should be one workspace/applyEdit: %d new", len(ed.edits)-edits)
	}
	for rel, want := range map[string]string{"notes.txt": "mine\n", "keep.txt": "keep\n"} {
		if got := ed.text(textdoc.PathToURI(filepath.Join(c.Dir, rel))); got != want {
			t.Errorf("%s's buffer after undo = %q; want %q", rel, got, want)
		}
	}
}

// A command that only changed permission bits is undone through warden
// serve too: the modes are set on disk once the editor's part (nothing to
// edit here) landed, open or closed; the buffer is left as it was.
func TestServeUndoesACommandsChmod(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	write(t, c.Dir, map[string]string{"tool.sh": "#!/bin/sh\n", "open.txt": "open\n"})
	ed.open(filepath.Join(c.Dir, "open.txt"), "open\n")
	if msg := runPatchJob(t, c, "warden.exec", map[string]any{"command": "chmod 755 tool.sh open.txt"}); !strings.Contains(msg, "exited 0") {
		t.Fatalf("exec: %q", msg)
	}
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "undid") {
		t.Fatalf("undo: %q", msg)
	}
	for _, rel := range []string{"tool.sh", "open.txt"} {
		fi, err := os.Stat(filepath.Join(c.Dir, rel))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s after undo: %v, %v; want mode 0644", rel, fi.Mode().Perm(), err)
		}
	}
	if got := ed.text(textdoc.PathToURI(filepath.Join(c.Dir, "open.txt"))); got != "open\n" {
		t.Errorf("open.txt's buffer after undo = %q", got)
	}
}

// An editor that did not reload what a command wrote or deleted keeps
// showing the files as they were: those buffers are not the user's edits.
// The undo writes the disk back without an edit of them (they already
// show that content), and refuses as before when a buffer holds an edit.
func TestServeUndoOfACommandUnderStaleBuffers(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	write(t, c.Dir, map[string]string{"gone.txt": "gone\n", "changed.txt": "before\n", "edited.txt": "mine\n"})
	gone := ed.open(filepath.Join(c.Dir, "gone.txt"), "gone\n")
	changed := ed.open(filepath.Join(c.Dir, "changed.txt"), "before\n")
	script := "rm gone.txt && echo after > changed.txt"
	if msg := runPatchJob(t, c, "warden.exec", map[string]any{"command": script}); !strings.Contains(msg, "exited 0") {
		t.Fatalf("exec: %q", msg)
	}
	edits := len(ed.edits)
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "undid") {
		t.Fatalf("undo under stale buffers: %q", msg)
	}
	if len(ed.edits) != edits {
		t.Errorf("the editor got %d edits for buffers that already show the content", len(ed.edits)-edits)
	}
	for rel, want := range map[string]string{"gone.txt": "gone\n", "changed.txt": "before\n"} {
		if got, ok := fileText(t, filepath.Join(c.Dir, rel)); !ok || got != want {
			t.Errorf("%s on disk after undo = %q, %v; want %q", rel, got, ok, want)
		}
	}
	if ed.text(gone) != "gone\n" || ed.text(changed) != "before\n" {
		t.Errorf("buffers after undo: %q, %q", ed.text(gone), ed.text(changed))
	}

	// The twin: a buffer the user edited is an edit, stale or not.
	mine := ed.open(filepath.Join(c.Dir, "edited.txt"), "mine\n")
	if msg := runPatchJob(t, c, "warden.exec", map[string]any{"command": "echo theirs > edited.txt"}); !strings.Contains(msg, "exited 0") {
		t.Fatalf("exec: %q", msg)
	}
	ed.type_(mine, "mine, typed\n")
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "edited.txt changed since") {
		t.Errorf("undo over an edited buffer: %q", msg)
	}
	if got, _ := fileText(t, filepath.Join(c.Dir, "edited.txt")); got != "theirs\n" {
		t.Errorf("a refused undo wrote edited.txt: %q", got)
	}
	// So is a file another tool wrote on disk since, under a stale buffer.
	ed.type_(mine, "mine\n")
	write(t, c.Dir, map[string]string{"edited.txt": "a formatter's\n"})
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "edited.txt changed since") {
		t.Errorf("undo over a file written since: %q", msg)
	}
	if got, _ := fileText(t, filepath.Join(c.Dir, "edited.txt")); got != "a formatter's\n" {
		t.Errorf("a refused undo wrote edited.txt: %q", got)
	}
}

// A deleted file whose line breaks are CRLF comes back with them: an
// editor creating it would use its own (VS Code: LF), so Warden writes it
// on disk, as it does a file that is not text.
func TestServeUndoRestoresCRLFOnDisk(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	write(t, c.Dir, map[string]string{"dos.txt": "one\r\ntwo\r\n", "unix.txt": "one\ntwo\n"})
	if msg := runPatchJob(t, c, "warden.exec", map[string]any{"command": "rm dos.txt unix.txt"}); !strings.Contains(msg, "exited 0") {
		t.Fatalf("exec: %q", msg)
	}
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "undid") {
		t.Fatalf("undo: %q", msg)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "dos.txt")); !ok || got != "one\r\ntwo\r\n" {
		t.Errorf("dos.txt after undo = %q, %v", got, ok)
	}
	edit, _ := json.Marshal(ed.lastEdit())
	if strings.Contains(string(edit), "dos.txt") || !strings.Contains(string(edit), "unix.txt") {
		t.Errorf("the editor should create unix.txt, not dos.txt: %s", edit)
	}
}
