package lsp_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// fakeEditor applies workspace/applyEdit to its own buffers the way real
// editors do, and reports changes with didOpen/didChange/didClose some time
// after answering, as Neovim does (it debounces didChange by 150 ms).
type fakeEditor struct {
	t *testing.T
	c *lsptest.Client
	// neovim: a stale versioned edit is skipped but the answer is
	// applied=true (Neovim 0.7). Otherwise, as VS Code, a stale edit makes
	// the whole answer applied=false and nothing changes.
	neovim bool
	// eglot: resource operations (CreateFile, DeleteFile, RenameFile) are
	// skipped without a word, as eglot 1.9 does.
	eglot bool
	// accept decides which annotated changes the user ticks in VS Code's
	// Refactor Preview; nil accepts everything.
	accept func(annotationID string) bool
	// beforeApply runs when an edit arrives, before it is applied (a user
	// typing at that moment).
	beforeApply func()
	// userEdits is what the user wrote over the proposed side in Neovim's
	// review before accepting: the buffer gets it, and the answer says
	// "edited" for the file, as the plugin does.
	userEdits map[protocol.DocumentURI]string

	mu      sync.Mutex
	bufs    map[protocol.DocumentURI]string
	edits   []wire.ApplyWorkspaceEditParams
	pending sync.WaitGroup
}

func newFakeEditor(t *testing.T, c *lsptest.Client) *fakeEditor {
	e := &fakeEditor{t: t, c: c, bufs: map[protocol.DocumentURI]string{}}
	c.OnRequest("workspace/applyEdit", e.applyEdit)
	t.Cleanup(e.pending.Wait)
	return e
}

// open opens a buffer whose (unsaved) text may differ from the disk.
func (e *fakeEditor) open(path, text string) protocol.DocumentURI {
	uri := e.c.Open(path, "plaintext", text)
	e.mu.Lock()
	e.bufs[uri] = text
	e.mu.Unlock()
	return uri
}

// type_ replaces the buffer's text as the user would, with a didChange.
func (e *fakeEditor) type_(uri protocol.DocumentURI, text string) {
	e.mu.Lock()
	e.bufs[uri] = text
	e.mu.Unlock()
	e.c.Change(uri, lsptest.Edit{Text: text})
}

func (e *fakeEditor) text(uri protocol.DocumentURI) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bufs[uri]
}

func (e *fakeEditor) lastEdit() wire.ApplyWorkspaceEditParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.edits) == 0 {
		e.t.Fatal("no workspace/applyEdit arrived")
	}
	return e.edits[len(e.edits)-1]
}

func (e *fakeEditor) ok(id string) bool { return id == "" || e.accept == nil || e.accept(id) }

func (e *fakeEditor) applyEdit(raw json.RawMessage) (any, *lsptest.RPCError) {
	var p wire.ApplyWorkspaceEditParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &lsptest.RPCError{Code: lsptest.CodeInvalidParams, Message: err.Error()}
	}
	if e.beforeApply != nil {
		e.beforeApply()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.edits = append(e.edits, p)
	if !e.neovim {
		for _, dc := range p.Edit.DocumentChanges {
			if te := dc.TextDocumentEdit; te != nil && te.TextDocument.Version != nil {
				if _, open := e.bufs[te.TextDocument.URI]; !open || *te.TextDocument.Version != e.version(te.TextDocument.URI) {
					return wire.ApplyWorkspaceEditResult{Applied: false, FailureReason: "file changed"}, nil
				}
			}
		}
	}
	type note struct {
		kind string // open, change, close
		uri  protocol.DocumentURI
		text string
	}
	var notes []note
	var reviewed []wire.ReviewedChange
	for _, dc := range p.Edit.DocumentChanges {
		switch {
		case dc.TextDocumentEdit != nil:
			te := dc.TextDocumentEdit
			uri := te.TextDocument.URI
			text, open := e.bufs[uri]
			if !open {
				data, err := os.ReadFile(pathOf(uri))
				if err != nil {
					return wire.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
				}
				text = string(data)
				notes = append(notes, note{"open", uri, text})
			} else if te.TextDocument.Version != nil && *te.TextDocument.Version != e.version(uri) {
				continue // Neovim: "Buffer … newer than edits", skipped, still applied=true
			}
			for i := len(te.Edits) - 1; i >= 0; i-- { // edits do not overlap: apply from the end
				ed := te.Edits[i]
				if !e.ok(ed.AnnotationID) {
					continue
				}
				start, end := offset(text, ed.Range.Start), offset(text, ed.Range.End)
				text = text[:start] + ed.NewText + text[end:]
			}
			if edited, ok := e.userEdits[uri]; ok {
				text = edited
				reviewed = append(reviewed, wire.ReviewedChange{URI: uri, Outcome: "edited"})
			}
			e.bufs[uri] = text
			notes = append(notes, note{"change", uri, text})
		case dc.CreateFile != nil:
			if e.eglot || !e.ok(string(dc.CreateFile.AnnotationID)) {
				continue
			}
			os.MkdirAll(filepath.Dir(pathOf(dc.CreateFile.URI)), 0o755)
			os.WriteFile(pathOf(dc.CreateFile.URI), nil, 0o644)
		case dc.RenameFile != nil:
			r := dc.RenameFile
			if e.eglot || !e.ok(string(r.AnnotationID)) {
				continue
			}
			if text, open := e.bufs[r.OldURI]; open {
				os.WriteFile(pathOf(r.OldURI), []byte(text), 0o644) // Neovim writes the buffer first
				delete(e.bufs, r.OldURI)
				e.bufs[r.NewURI] = text
				notes = append(notes, note{"close", r.OldURI, ""}, note{"open", r.NewURI, text})
			}
			os.Rename(pathOf(r.OldURI), pathOf(r.NewURI))
		case dc.DeleteFile != nil:
			if e.eglot || !e.ok(string(dc.DeleteFile.AnnotationID)) {
				continue
			}
			os.Remove(pathOf(dc.DeleteFile.URI))
			if _, open := e.bufs[dc.DeleteFile.URI]; open {
				delete(e.bufs, dc.DeleteFile.URI)
				notes = append(notes, note{"close", dc.DeleteFile.URI, ""})
			}
		}
	}
	e.pending.Add(1)
	go func() {
		defer e.pending.Done()
		time.Sleep(150 * time.Millisecond)
		for _, n := range notes {
			switch n.kind {
			case "open":
				e.c.Open(pathOf(n.uri), "plaintext", n.text)
			case "change":
				e.c.Change(n.uri, lsptest.Edit{Text: n.text})
			case "close":
				e.c.Close(n.uri)
			}
		}
	}()
	res := wire.ApplyWorkspaceEditResult{Applied: true}
	if len(reviewed) > 0 {
		res.Warden = &wire.ReviewOutcome{Changes: reviewed}
	}
	return res, nil
}

// version is the buffer version the server last heard of (lsptest counts).
func (e *fakeEditor) version(uri protocol.DocumentURI) int32 {
	for _, m := range slicesReverse(e.c.Messages()) {
		if m.Dir != lsptest.Sent || (m.Method != "textDocument/didChange" && m.Method != "textDocument/didOpen") {
			continue
		}
		var p struct {
			TextDocument struct {
				URI     protocol.DocumentURI `json:"uri"`
				Version int32                `json:"version"`
			} `json:"textDocument"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.TextDocument.URI == uri {
			return p.TextDocument.Version
		}
	}
	return 0
}

func slicesReverse(ms []lsptest.Message) []lsptest.Message {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
	return ms
}

func pathOf(uri protocol.DocumentURI) string { return strings.TrimPrefix(string(uri), "file://") }

// offset converts an LSP position (UTF-16 columns) to a byte offset.
func offset(text string, p protocol.Position) int {
	off := 0
	for line := uint32(0); line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	for units := uint32(0); units < p.Character && off < len(text) && text[off] != '\n'; {
		r, size := utf8.DecodeRuneInString(text[off:])
		units += uint32(utf16.RuneLen(r))
		off += size
	}
	return off
}

// runPatchJob runs a command and returns its closing progress message.
func runPatchJob(t *testing.T, c *lsptest.Client, command string, args ...any) string {
	t.Helper()
	mark := c.Mark()
	if _, err := c.ExecuteCommand(command, args...); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	end := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	var p struct {
		Value struct {
			Message string `json:"message"`
		} `json:"value"`
	}
	end.Decode(&p)
	return p.Value.Message
}

func startPatchServer(t *testing.T, caps map[string]any, env ...string) (*lsptest.Client, *fakeEditor) {
	t.Helper()
	c := lsptest.Start(t, lsptest.Options{Env: env})
	c.InitializeWith(map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          textdoc.PathToURI(c.Dir),
		"capabilities":     caps,
		"workspaceFolders": []map[string]any{{"uri": textdoc.PathToURI(c.Dir), "name": "ws"}},
	})
	return c, newFakeEditor(t, c)
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fileText(t *testing.T, path string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return string(data), true
}

const threeFilePatch = `*** Begin Patch
*** Update File: a.txt
@@
 one
-two
+TWO
 three
@@
 nine
-ten
+TEN
*** Add File: sub/b.txt
+new file
*** Delete File: c.txt
*** End Patch`

// The patch lands in the open buffer (its unsaved text, at its version),
// creates and deletes files, and every hunk is its own confirmable change.
func TestPatchApplyVersionedEditsWithAnnotations(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	write(t, c.Dir, map[string]string{"a.txt": "on disk only\n", "c.txt": "bye\n"})
	buffer := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	uri := ed.open("a.txt", buffer)
	ed.type_(uri, buffer) // version 2

	msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": threeFilePatch})
	if !strings.HasPrefix(msg, "Success.") || !strings.Contains(msg, "M a.txt") || !strings.Contains(msg, "A sub/b.txt") || !strings.Contains(msg, "D c.txt") {
		t.Fatalf("result %q", msg)
	}
	p := ed.lastEdit()
	if p.Label != "Warden: update a.txt, add sub/b.txt, delete c.txt" {
		t.Errorf("label %q", p.Label)
	}
	te := p.Edit.DocumentChanges[0].TextDocumentEdit
	if te == nil || te.TextDocument.Version == nil || *te.TextDocument.Version != 2 || len(te.Edits) != 2 {
		t.Fatalf("first change = %+v, want a TextDocumentEdit at version 2 with 2 hunks", p.Edit.DocumentChanges[0])
	}
	for _, e := range te.Edits {
		if a, ok := p.Edit.ChangeAnnotations[e.AnnotationID]; !ok || !a.NeedsConfirmation {
			t.Errorf("hunk edit %+v has no annotation needing confirmation", e)
		}
	}
	if dc := p.Edit.DocumentChanges[1]; dc.CreateFile == nil || dc.CreateFile.Options != nil {
		t.Errorf("second change %+v: want a CreateFile without options (Neovim 0.7 truncates or skips with them)", dc)
	}
	if dc := p.Edit.DocumentChanges[3]; dc.DeleteFile == nil {
		t.Errorf("fourth change %+v: want DeleteFile", dc)
	}
	if got := ed.text(uri); got != strings.Replace(strings.Replace(buffer, "two", "TWO", 1), "ten", "TEN", 1) {
		t.Errorf("buffer = %q", got)
	}
	if got, _ := fileText(t, filepath.Join(c.Dir, "a.txt")); got != "on disk only\n" {
		t.Errorf("disk a.txt changed to %q: the buffer is unsaved", got)
	}
	if _, exists := fileText(t, filepath.Join(c.Dir, "c.txt")); exists {
		t.Error("c.txt not deleted")
	}
	if got := ed.text(c.URI("sub/b.txt")); got != "new file\n" {
		t.Errorf("b.txt buffer = %q", got)
	}
}

// Neovim 0.7 advertises no annotations: the edits carry none.
func TestPatchApplyWithoutAnnotationSupport(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.Neovim07Capabilities())
	ed.neovim = true
	ed.open("a.txt", "one\ntwo\nthree\nnine\nten\n")
	write(t, c.Dir, map[string]string{"c.txt": "bye\n"})
	if msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": threeFilePatch}); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("result %q", msg)
	}
	p := ed.lastEdit()
	raw, _ := json.Marshal(p)
	if strings.Contains(string(raw), "annotationId") || p.Edit.ChangeAnnotations != nil {
		t.Errorf("annotations sent to a client without support: %s", raw)
	}
}

// The user types while the edit is on its way: VS Code refuses the stale
// version (applied=false), Neovim skips it and says applied=true. Either
// way Warden reports the file as not applied and nothing is clobbered.
func TestPatchApplyStaleVersionRejected(t *testing.T) {
	for _, neovim := range []bool{false, true} {
		name := "vscode"
		if neovim {
			name = "neovim"
		}
		t.Run(name, func(t *testing.T) {
			c, ed := startPatchServer(t, lsptest.FullCapabilities())
			ed.neovim = neovim
			uri := ed.open("a.txt", "one\ntwo\nthree\n")
			ed.beforeApply = func() { ed.type_(uri, "one\ntwo\nthree\nuser typing\n") }
			msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"})
			if !strings.Contains(msg, "The patch was not applied.") || !strings.Contains(msg, "not applied: a.txt") {
				t.Fatalf("result %q", msg)
			}
			if got := ed.text(uri); got != "one\ntwo\nthree\nuser typing\n" {
				t.Errorf("buffer = %q", got)
			}
			// Nothing landed, so there is nothing to undo.
			c.OnRequest("window/showMessageRequest", lsptest.Dismiss())
			if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "nothing to undo") {
				t.Errorf("undo after a rejected patch: %q", msg)
			}
		})
	}
}

// In VS Code's Refactor Preview the user ticks only the first hunk and the
// new file: Warden reports exactly that.
func TestPatchApplyPartialAcceptanceReported(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	ed.accept = func(id string) bool { return id == "f0h0" || id == "f1" }
	uri := ed.open("a.txt", "one\ntwo\nthree\nnine\nten\n")
	write(t, c.Dir, map[string]string{"c.txt": "bye\n"})
	msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": threeFilePatch})
	for _, want := range []string{"applied only in part", "M a.txt (only chunks 1 of 2 applied", "A sub/b.txt", "not applied: c.txt"} {
		if !strings.Contains(msg, want) {
			t.Errorf("result %q lacks %q", msg, want)
		}
	}
	if got := ed.text(uri); got != "one\nTWO\nthree\nnine\nten\n" {
		t.Errorf("buffer = %q", got)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains("applied only in part"))
}

// Undo puts the buffers and files back, refuses when the user edited them
// since (unless forced), and works after a restart of the server.
func TestUndo(t *testing.T) {
	state := t.TempDir()
	c, ed := startPatchServer(t, lsptest.FullCapabilities(), "XDG_STATE_HOME="+state)
	write(t, c.Dir, map[string]string{"c.txt": "bye\n"})
	original := "one\ntwo\nthree\nnine\nten\n"
	uri := ed.open("a.txt", original)
	if msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": threeFilePatch}); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("apply: %q", msg)
	}
	if msg := runPatchJob(t, c, "warden.undo"); !strings.HasPrefix(msg, "undid update a.txt") {
		t.Fatalf("undo: %q", msg)
	}
	if got := ed.text(uri); got != original {
		t.Errorf("buffer after undo = %q", got)
	}
	if got := ed.text(c.URI("c.txt")); got != "bye\n" {
		t.Errorf("c.txt buffer after undo = %q", got)
	}
	if _, ok := fileText(t, filepath.Join(c.Dir, "sub/b.txt")); ok {
		t.Errorf("sub/b.txt still exists after undo")
	}

	// Apply again, then the user edits a.txt: undo refuses.
	if msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch"}); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("apply: %q", msg)
	}
	ed.type_(uri, "one\n2\nthree\nnine\nten\nmine\n")
	if msg := runPatchJob(t, c, "warden.undo"); !strings.Contains(msg, "a.txt changed since Warden's edit") || !strings.Contains(msg, "force") {
		t.Fatalf("undo of an edited file: %q", msg)
	}
	if got := ed.text(uri); got != "one\n2\nthree\nnine\nten\nmine\n" {
		t.Errorf("refused undo changed the buffer: %q", got)
	}
	c.Shutdown()

	// A new server (same state dir) still knows the change; forced, it
	// reverts it on disk for a closed file.
	os.WriteFile(filepath.Join(c.Dir, "a.txt"), []byte("one\n2\nthree\nnine\nten\nmine\n"), 0o644)
	c2 := lsptest.Start(t, lsptest.Options{Dir: c.Dir, Env: []string{"XDG_STATE_HOME=" + state}})
	c2.Initialize(nil)
	ed2 := newFakeEditor(t, c2)
	if msg := runPatchJob(t, c2, "warden.undo", map[string]any{"force": true}); !strings.HasPrefix(msg, "undid update a.txt") {
		t.Fatalf("forced undo after restart: %q", msg)
	}
	if got := ed2.text(c2.URI("a.txt")); got != original { // forced: the user's line goes too
		t.Errorf("a.txt after forced undo = %q", got)
	}
}

// A patch the user edited in the review before accepting it ("applied as
// you edited it") is recorded like any other: undo restores the file as it
// was before the agent, also after a restart, and a second undo says the
// change was undone already rather than that none was ever recorded.
func TestUndoOfPatchTheUserEdited(t *testing.T) {
	state := t.TempDir()
	c, ed := startPatchServer(t, lsptest.FullCapabilities(), "XDG_STATE_HOME="+state)
	ed.neovim = true
	original := "one\ntwo\nthree\n"
	uri := ed.open("a.txt", original)
	ed.userEdits = map[protocol.DocumentURI]string{uri: "one\nTWO, as the user wrote it\nthree\n"}
	start := time.Now()
	msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"})
	if !strings.Contains(msg, "M a.txt (applied as the user edited it") {
		t.Fatalf("apply of an edited patch: %q", msg)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the edited patch settled after %v: it waited out the settle time", took)
	}
	os.WriteFile(filepath.Join(c.Dir, "a.txt"), []byte(ed.text(uri)), 0o644) // the review writes it
	c.Shutdown()

	c2 := lsptest.Start(t, lsptest.Options{Dir: c.Dir, Env: []string{"XDG_STATE_HOME=" + state}})
	c2.Initialize(nil)
	ed2 := newFakeEditor(t, c2)
	if msg := runPatchJob(t, c2, "warden.undo"); !strings.HasPrefix(msg, "undid update a.txt") {
		t.Fatalf("undo of an edited patch after a restart: %q", msg)
	}
	if got := ed2.text(c2.URI("a.txt")); got != original {
		t.Errorf("a.txt after undo = %q, want the state before the agent", got)
	}
	msg = runPatchJob(t, c2, "warden.undo")
	if !strings.Contains(msg, "already undone") || !strings.Contains(msg, "update a.txt") {
		t.Errorf("second undo: %q, want it to say the change was already undone", msg)
	}
}

// A patch to a protected path asks first; denying it changes nothing,
// allowing it applies it.
func TestPatchApplyAsksForProtectedPaths(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	patchText := "*** Begin Patch\n*** Add File: .vscode/tasks.json\n+{}\n*** End Patch"
	asked := make(chan json.RawMessage, 4)
	c.OnRequest("window/showMessageRequest", lsptest.Record(asked, lsptest.Choose("Deny")))
	msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": patchText})
	if !strings.Contains(msg, "failed: the patch was not applied") {
		t.Fatalf("denied patch: %q", msg)
	}
	var req protocol.ShowMessageRequestParams
	json.Unmarshal(<-asked, &req)
	var titles []string
	for _, a := range req.Actions {
		titles = append(titles, a.Title)
	}
	// The client reviews patches (change annotations): approving opens the review.
	if !strings.Contains(req.Message, ".vscode/tasks.json") || strings.Join(titles, "|") != "Deny|Review…|Deny and stop" {
		t.Errorf("dialog %q with %v", req.Message, titles)
	}
	if len(ed.edits) != 0 {
		t.Errorf("an edit was sent after a denial")
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Review…"))
	if msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": patchText}); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("allowed patch: %q", msg)
	}
}

// Bad patches fail the job with the place named, and nothing is sent.
func TestPatchApplyBadPatch(t *testing.T) {
	c, ed := startPatchServer(t, lsptest.FullCapabilities())
	ed.open("a.txt", "one\n")
	msg := runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+x\n*** End Patch"})
	if !strings.Contains(msg, "a.txt: chunk 1 (patch line 3): could not find these lines") {
		t.Errorf("result %q", msg)
	}
	if _, err := c.ExecuteCommand("warden.patch.apply", map[string]any{"patch": " "}); err == nil {
		t.Error("an empty patch argument was accepted")
	}
	if len(ed.edits) != 0 {
		t.Error("an edit was sent for a bad patch")
	}
}

// Under the untrusted policy every patch asks; "Allow for session" is
// remembered per file, so a later patch to the same file does not ask again
// while one touching another file does.
func TestPatchApprovalRememberedPerFile(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(map[string]any{"approvalPolicy": "untrusted"})
	ed := newFakeEditor(t, c)
	ed.open("a.txt", "1\n2\n3\n")
	ed.open("b.txt", "x\n")
	asked := make(chan json.RawMessage, 8)
	c.OnRequest("window/showMessageRequest", lsptest.Record(asked, lsptest.Choose("Allow for session")))
	apply := func(p string) string {
		return runPatchJob(t, c, "warden.patch.apply", map[string]any{"patch": p})
	}
	if msg := apply("*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+one\n*** End Patch"); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("first patch: %q", msg)
	}
	if len(asked) != 1 {
		t.Fatalf("first patch asked %d times, want 1", len(asked))
	}
	if msg := apply("*** Begin Patch\n*** Update File: a.txt\n@@\n-2\n+two\n*** End Patch"); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("second patch: %q", msg)
	}
	if len(asked) != 1 {
		t.Errorf("a patch to a file approved for the session asked again")
	}
	if msg := apply("*** Begin Patch\n*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch"); !strings.HasPrefix(msg, "Success.") {
		t.Fatalf("third patch: %q", msg)
	}
	if len(asked) != 2 {
		t.Errorf("a patch to another file did not ask (asked %d times)", len(asked))
	}
}
