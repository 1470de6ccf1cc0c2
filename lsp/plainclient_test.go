package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// Tests with a client that announces only what Emacs eglot 1.9 announces
// (lsptest.EglotCapabilities): no progress UI, no resource operations, no
// command palette.

// startEglot starts the real binary as eglot would, with settings as
// initializationOptions.
func startEglot(t *testing.T, settings map[string]any) (*lsptest.Client, *fakeEditor) {
	t.Helper()
	c := lsptest.Start(t, lsptest.Options{})
	c.InitializeWith(map[string]any{
		"processId":             os.Getpid(),
		"clientInfo":            map[string]string{"name": "Eglot", "version": "1.9"},
		"rootUri":               textdoc.PathToURI(c.Dir),
		"capabilities":          lsptest.EglotCapabilities(),
		"initializationOptions": settings,
		"workspaceFolders":      []map[string]any{{"uri": textdoc.PathToURI(c.Dir), "name": "ws"}},
	})
	ed := newFakeEditor(t, c)
	ed.eglot = true
	return c, ed
}

// startJob runs a job command and returns its id.
func startJob(t *testing.T, c *lsptest.Client, command string, args ...any) string {
	t.Helper()
	raw, err := c.ExecuteCommand(command, args...)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	var started lsp.JobStarted
	if err := json.Unmarshal(raw, &started); err != nil || started.JobID == "" {
		t.Fatalf("%s answered %s", command, raw)
	}
	return started.JobID
}

// shown waits for a window/showMessage containing s after mark.
func shown(t *testing.T, c *lsptest.Client, mark int, s string) string {
	t.Helper()
	m := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains(s))
	var p protocol.ShowMessageParams
	m.Decode(&p)
	return p.Message
}

// Bullet 1: the files eglot cannot create, delete or move are written by
// Warden on disk after the editor applied the text edits; no resource
// operation is sent. Undo goes the same way. A file the patch must delete
// while it is open in the editor refuses the whole patch, changing nothing.
func TestPlainClientPatchResourceOperationsOnDisk(t *testing.T) {
	c, ed := startEglot(t, nil)
	write(t, c.Dir, map[string]string{"c.txt": "bye\n", "old.txt": "keep\nchange me\n", "a.txt": "on disk\n"})
	uri := ed.open("a.txt", "one\ntwo\nthree\nnine\nten\n")
	patchText := threeFilePatch[:strings.Index(threeFilePatch, "*** End Patch")] +
		"*** Update File: old.txt\n*** Move to: moved/new.txt\n@@\n keep\n-change me\n+changed\n*** End Patch"
	mark := c.Mark()
	startJob(t, c, "warden.patch.apply", map[string]any{"patch": patchText})
	if msg := shown(t, c, mark, "Applying a patch"); !strings.Contains(msg, "Success.") {
		t.Fatalf("outcome: %q", msg)
	}
	for _, dc := range ed.lastEdit().Edit.DocumentChanges {
		if dc.CreateFile != nil || dc.DeleteFile != nil || dc.RenameFile != nil {
			t.Errorf("a resource operation was sent to a client without resourceOperations: %+v", dc)
		}
	}
	if got := ed.text(uri); got != "one\nTWO\nthree\nnine\nTEN\n" {
		t.Errorf("buffer = %q", got)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "sub/b.txt")); !ok || got != "new file\n" {
		t.Errorf("sub/b.txt = %q, %v", got, ok)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "moved/new.txt")); !ok || got != "keep\nchanged\n" {
		t.Errorf("moved/new.txt = %q, %v", got, ok)
	}
	for _, gone := range []string{"c.txt", "old.txt"} {
		if _, ok := fileText(t, filepath.Join(c.Dir, gone)); ok {
			t.Errorf("%s still exists", gone)
		}
	}

	mark = c.Mark()
	startJob(t, c, "warden.undo")
	if msg := shown(t, c, mark, "Undoing"); !strings.Contains(msg, "undid") {
		t.Fatalf("undo outcome: %q", msg)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "c.txt")); !ok || got != "bye\n" {
		t.Errorf("c.txt after undo = %q, %v", got, ok)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "old.txt")); !ok || got != "keep\nchange me\n" {
		t.Errorf("old.txt after undo = %q, %v", got, ok)
	}
	for _, gone := range []string{"sub/b.txt", "moved/new.txt"} {
		if _, ok := fileText(t, filepath.Join(c.Dir, gone)); ok {
			t.Errorf("%s exists after undo", gone)
		}
	}

	// The file to delete is open: refused, nothing changed anywhere.
	open := ed.open("c.txt", "bye\nunsaved\n")
	edits := len(ed.edits)
	mark = c.Mark()
	startJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Delete File: c.txt\n*** End Patch"})
	if msg := shown(t, c, mark, "Applying a patch failed"); !strings.Contains(msg, "c.txt, which is open in the editor") || !strings.Contains(msg, "nothing changed") {
		t.Errorf("refusal: %q", msg)
	}
	if got, ok := fileText(t, filepath.Join(c.Dir, "c.txt")); !ok || got != "bye\n" || ed.text(open) != "bye\nunsaved\n" {
		t.Errorf("c.txt changed: disk %q, buffer %q", got, ed.text(open))
	}
	if got := ed.text(uri); got != "one\ntwo\nthree\nnine\nten\n" || len(ed.edits) != edits {
		t.Errorf("a refused patch reached the editor: %q, %d edits", got, len(ed.edits))
	}
}

// Bullet 1, twin: the editor's part declined means nothing is done on disk.
func TestPlainClientDeclinedEditLeavesTheDiskAlone(t *testing.T) {
	c, _ := startEglot(t, nil)
	c.OnRequest("workspace/applyEdit", lsptest.Applied(false))
	write(t, c.Dir, map[string]string{"a.txt": "one\ntwo\nthree\nnine\nten\n", "c.txt": "bye\n"})
	mark := c.Mark()
	startJob(t, c, "warden.patch.apply", map[string]any{"patch": threeFilePatch})
	msg := shown(t, c, mark, "not done: the editor's part")
	if !strings.Contains(msg, "c.txt") {
		t.Errorf("outcome: %q", msg)
	}
	if _, ok := fileText(t, filepath.Join(c.Dir, "c.txt")); !ok {
		t.Error("c.txt was deleted although the editor declined the patch")
	}
	if _, ok := fileText(t, filepath.Join(c.Dir, "sub/b.txt")); ok {
		t.Error("sub/b.txt was created although the editor declined the patch")
	}
}

// Bullet 2: without progress UI every job kind ends with a showMessage:
// exec, patch, undo, a cancelled job. With progress there is no second
// message for a patch that landed.
func TestPlainClientSeesEveryJobOutcome(t *testing.T) {
	c, ed := startEglot(t, nil)
	ed.open("a.txt", "x\n")
	mark := c.Mark()
	startJob(t, c, "warden.exec", map[string]any{"command": []string{"true"}})
	if msg := shown(t, c, mark, "Warden: `true`"); !strings.Contains(msg, "exited 0") {
		t.Errorf("exec outcome %q", msg)
	}
	mark = c.Mark()
	startJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"})
	if msg := shown(t, c, mark, "Applying a patch"); !strings.Contains(msg, "Success.") || !strings.Contains(msg, "a.txt") {
		t.Errorf("patch outcome %q", msg)
	}
	mark = c.Mark()
	startJob(t, c, "warden.undo")
	if msg := shown(t, c, mark, "Undoing"); !strings.Contains(msg, "undid update a.txt") {
		t.Errorf("undo outcome %q", msg)
	}

	// The twin: a client with progress gets the outcome there only.
	full, fed := startPatchServer(t, lsptest.FullCapabilities())
	fed.open("a.txt", "x\n")
	mark = full.Mark()
	if msg := runPatchJob(t, full, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"}); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("apply: %q", msg)
	}
	time.Sleep(200 * time.Millisecond)
	if m, ok := full.Find(mark, "window/showMessage", nil); ok {
		t.Errorf("a client with progress also got %s", m.Params)
	}
}

// Bullet 3: warden.agent.cancel {jobId} cancels an exec waiting for its
// dialog; warden.status lists the job; the command never runs and the
// client is told. The twin: an unknown id is an error naming the running
// jobs, and a job not cancelled runs.
func TestPlainClientCancelsAnyJob(t *testing.T) {
	c, _ := startEglot(t, map[string]any{"approvalPolicy": "untrusted"})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Dismiss()))
	mark := c.Mark()
	id := startJob(t, c, "warden.exec", map[string]any{"command": []string{"touch", "made"}})
	c.WaitFrom(mark, "window/showMessageRequest", nil)
	found := false
	for _, j := range c.Status().Jobs {
		found = found || (j.ID == id && j.Command == "warden.exec")
	}
	if !found {
		t.Fatalf("warden.status does not list exec job %s: %+v", id, c.Status().Jobs)
	}
	if _, err := c.ExecuteCommand("warden.agent.cancel", map[string]any{"jobId": "999"}); err == nil || !strings.Contains(err.Error(), id+" warden.exec") {
		t.Errorf("unknown job id: %v", err)
	}
	raw, err := c.ExecuteCommand("warden.agent.cancel", map[string]any{"jobId": id})
	if err != nil || !strings.Contains(string(raw), `"cancelled":["`+id+`"]`) {
		t.Fatalf("cancel answered %s, %v", raw, err)
	}
	if msg := shown(t, c, mark, "Warden: `touch made`"); !strings.Contains(msg, "did not run") || !strings.Contains(msg, "cancel") {
		t.Errorf("cancel outcome %q", msg)
	}
	c.WaitFrom(mark, "$/cancelRequest", nil) // the dialog is withdrawn
	if _, ok := fileText(t, filepath.Join(c.Dir, "made")); ok {
		t.Error("the cancelled command ran")
	}
	listed := func() bool {
		for _, j := range c.Status().Jobs {
			if j.ID == id {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); listed() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if listed() {
		t.Errorf("job %s still listed after it was cancelled", id)
	}
}

// Bullet 4: a dialog eglot never answers (C-g) does not swallow the next
// identical request: it gets its own dialog, the first one is withdrawn, and
// the answer serves both. The twin (identical requests at the same moment
// share one dialog) is approvals' TestOrchestratorConcurrentIdenticalRequestsShareOnePrompt.
func TestPlainClientUnansweredDialogDoesNotSwallowTheNext(t *testing.T) {
	c, _ := startEglot(t, map[string]any{"approvalPolicy": "untrusted"})
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	asked := make(chan json.RawMessage, 4)
	var calls atomic.Int32
	c.OnRequest("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.RPCError) {
		asked <- p
		if calls.Add(1) == 1 {
			<-never // C-g: eglot never answers
			return nil, nil
		}
		return lsptest.Choose("Allow once")(p)
	})
	mark := c.Mark()
	startJob(t, c, "warden.exec", map[string]any{"command": []string{"touch", "made"}})
	<-asked
	time.Sleep(2200 * time.Millisecond) // longer than the grace for identical requests
	startJob(t, c, "warden.exec", map[string]any{"command": []string{"touch", "made"}})
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the second identical request opened no dialog: it waits silently on the unanswered one")
	}
	c.WaitFrom(mark, "$/cancelRequest", nil)
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n < 2 && time.Now().Before(deadline); {
		n = 0
		for _, m := range c.Messages()[mark:] {
			if m.Method == "window/showMessage" && lsptest.MessageContains("exited 0")(m) {
				n++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := fileText(t, filepath.Join(c.Dir, "made")); !ok {
		t.Error("the allowed command did not run")
	}
	if d := len(dialogs(c, mark)); d != 2 {
		t.Errorf("%d dialogs, want 2", d)
	}
}

// Bullet 5: a dialog still unanswered is followed by a harmless logMessage,
// so eglot reads it even when it came in one read with the executeCommand
// reply. The twin: a dialog answered at once is not followed by one.
func TestPlainClientUnansweredRequestIsNudged(t *testing.T) {
	c, _ := startEglot(t, map[string]any{"approvalPolicy": "untrusted"})
	release := make(chan struct{})
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Choose("Deny")))
	mark := c.Mark()
	startJob(t, c, "warden.exec", map[string]any{"command": []string{"touch", "a"}})
	c.WaitFrom(mark, "window/logMessage", lsptest.MessageContains("waiting for your answer to window/showMessageRequest"))
	close(release)
	shown(t, c, mark, "did not run")

	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark = c.Mark()
	startJob(t, c, "warden.exec", map[string]any{"command": []string{"touch", "b"}})
	shown(t, c, mark, "did not run")
	time.Sleep(500 * time.Millisecond)
	if _, ok := c.Find(mark, "window/logMessage", lsptest.MessageContains("waiting for your answer")); ok {
		t.Error("a dialog answered at once was nudged")
	}
}

// Bullet 6: undo, status and cancel are code actions for a client without a
// command palette; Warden's own plugins (experimental.wardenAskAgent) do not
// get them.
func TestPlainClientCodeActionsReachUndoAndStatus(t *testing.T) {
	c, ed := startEglot(t, nil)
	uri := ed.open("a.txt", "x\n")
	byTitle := map[string]wire.CodeAction{}
	for _, a := range c.CodeActions(uri, protocol.Range{}) {
		byTitle[a.Title] = a
	}
	undo, status := byTitle["Warden: Undo the last change"], byTitle["Warden: Show status"]
	if undo.Command == nil || undo.Command.Command != "warden.undo" || status.Command == nil || status.Command.Command != "warden.status.show" {
		t.Fatalf("code actions: %+v", byTitle)
	}
	mark := c.Mark()
	startJob(t, c, status.Command.Command)
	if msg := shown(t, c, mark, "approval"); !strings.Contains(msg, "no jobs running") {
		t.Errorf("status message %q", msg)
	}
	mark = c.Mark()
	startJob(t, c, undo.Command.Command)
	if msg := shown(t, c, mark, "Undoing"); !strings.Contains(msg, "nothing to undo") && !strings.Contains(msg, "no change") {
		t.Logf("undo with nothing to undo: %q", msg)
	}

	plugin := lsptest.Start(t, lsptest.Options{})
	caps := lsptest.FullCapabilities()
	caps["experimental"] = map[string]any{"wardenAskAgent": true}
	plugin.InitializeWith(map[string]any{"processId": os.Getpid(), "rootUri": textdoc.PathToURI(plugin.Dir), "capabilities": caps})
	puri := plugin.Open(filepath.Join(plugin.Dir, "a.txt"), "plaintext", "x\n")
	for _, a := range plugin.CodeActions(puri, protocol.Range{}) {
		if a.Command != nil && (a.Command.Command == "warden.undo" || a.Command.Command == "warden.status.show") {
			t.Errorf("a Warden plugin got %q", a.Title)
		}
	}
}

// Bullet 3: a patch job waiting for the editor is cancelled by its id too;
// the client is told and the late answer changes nothing Warden reports.
func TestPlainClientCancelsAPatchJob(t *testing.T) {
	c, ed := startEglot(t, nil)
	uri := ed.open("a.txt", "x\n")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	c.OnRequest("workspace/applyEdit", lsptest.Hold(release, lsptest.Applied(false)))
	mark := c.Mark()
	id := startJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"})
	c.WaitFrom(mark, "workspace/applyEdit", nil)
	if _, err := c.ExecuteCommand("warden.agent.cancel", map[string]any{"jobId": id}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if msg := shown(t, c, mark, "(job "+id+")"); !strings.HasSuffix(msg, "cancelled") {
		t.Errorf("outcome %q", msg)
	}
	if got := ed.text(uri); got != "x\n" {
		t.Errorf("buffer = %q", got)
	}
}

// TestPlainClientRealEmacsEglot drives bin/warden from real Emacs 28 with
// eglot 1.9 (Debian bookworm's emacs-nox and elpa-eglot; .ci/run installs
// them), in batch: Deny of `rm -rf build` keeps the files, and an allowed
// patch lands in the open buffer with its unsaved edits while Warden deletes
// the file eglot cannot.
func TestPlainClientRealEmacsEglot(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("emacs not installed (CI installs Debian's emacs-nox and elpa-eglot)")
	}
	ws := t.TempDir()
	write(t, ws, map[string]string{"a.txt": "one\ntwo\nthree\n", "build/out.o": "x\n", "gone.txt": "bye\n"})
	home := t.TempDir()
	script, _ := filepath.Abs("testdata/eglot_e2e.el")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-q", "-l", script)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "WS="+ws, "WARDEN_BIN="+lsptest.Binary(t), "HOME="+home,
		"XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "Cannot open load file") {
		t.Skipf("eglot not installed: %s", out)
	}
	if err != nil {
		t.Fatalf("emacs: %v\n%s", err, out)
	}
	want := map[string]string{
		"EXEC: ":   "Warden: `rm -rf build` did not run: rejected by user",
		"BUILD: ":  "kept",
		"BUFFER: ": "one|TWO|three|unsaved|",
		"GONE: ":   "deleted",
	}
	for prefix, value := range want {
		found := false
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, prefix) {
				found = true
				if got := strings.TrimPrefix(l, prefix); got != value {
					t.Errorf("%s%q, want %q", prefix, got, value)
				}
			}
		}
		if !found {
			t.Errorf("no %s line in:\n%s", prefix, out)
		}
	}
	if !strings.Contains(string(out), "PATCH: Warden: Applying a patch") || !strings.Contains(string(out), "Success.") {
		t.Errorf("patch outcome not shown:\n%s", out)
	}
	if _, ok := fileText(t, filepath.Join(ws, "build/out.o")); !ok {
		t.Error("build/out.o is gone")
	}
	if got, _ := fileText(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("a.txt on disk = %q: the patched buffer must stay unsaved", got)
	}
}
