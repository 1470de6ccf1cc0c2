package lsp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/wire"
)

func askArgs(message string, actions ...string) map[string]any {
	items := []map[string]string{}
	for _, a := range actions {
		items = append(items, map[string]string{"title": a})
	}
	return map[string]any{"type": 1, "message": message, "actions": items}
}

func TestCodeActionIsAnsweredWhileADialogIsPending(t *testing.T) {
	c := startTest(t)
	release := make(chan struct{})
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Choose("Allow once")))
	uri := c.Open("a.go", "go", "package a\n")

	mark := c.Mark()
	raw, err := c.ExecuteCommand("warden.test.ask", askArgs("Run rm -rf build?", "Allow once", "Deny"))
	if err != nil {
		t.Fatal(err)
	}
	var started lsp.JobStarted
	json.Unmarshal(raw, &started)
	if started.JobID == "" {
		t.Fatalf("executeCommand answer %s has no jobId", raw)
	}
	c.WaitFrom(mark, "window/showMessageRequest", nil)

	// The dialog is open; the editor keeps working.
	begin := time.Now()
	if got := selected(t, c, uri, rng(0, 0, 0, 7)); got != "«package» (v1)" {
		t.Fatalf("code action while the dialog is pending: %q", got)
	}
	if d := time.Since(begin); d > time.Second {
		t.Fatalf("code action took %v while a job waited on the client", d)
	}
	if st := c.Status(); len(st.Jobs) != 1 || st.Jobs[0].Command != "warden.test.ask" || st.Jobs[0].Message != "waiting for the user" {
		t.Errorf("status jobs = %+v", st.Jobs)
	}

	close(release)
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("test: chose Allow once"))
	end := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	if !strings.Contains(string(end.Params), "chose Allow once") {
		t.Errorf("progress end = %s", end.Params)
	}
}

func TestJobProgressLifecycle(t *testing.T) {
	c := startTest(t)
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.test.sleep", map[string]any{"ms": 20}); err != nil {
		t.Fatal(err)
	}
	create := c.WaitFrom(mark, "window/workDoneProgress/create", nil)
	var cp struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(create.Params, &cp); err != nil || cp.Token == "" {
		t.Fatalf("create params %s: want a string token", create.Params)
	}
	begin := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("begin"))
	report := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("report"))
	end := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	for _, m := range []lsptest.Message{begin, report, end} {
		var p struct {
			Token string `json:"token"`
		}
		if json.Unmarshal(m.Params, &p); p.Token != cp.Token {
			t.Errorf("progress %s does not carry token %q", m.Params, cp.Token)
		}
	}
	if !strings.Contains(string(begin.Params), `"cancellable":true`) || !strings.Contains(string(begin.Params), "Test: sleeping") {
		t.Errorf("begin = %s", begin.Params)
	}
	if !strings.Contains(string(report.Params), `"percentage":0`) {
		t.Errorf("report = %s: 0%% must be sent, not dropped", report.Params)
	}
	if !strings.Contains(string(end.Params), "slept 20ms") {
		t.Errorf("end = %s", end.Params)
	}
}

func TestClientTokenIsUsedWithoutCreate(t *testing.T) {
	c := startTest(t)
	mark := c.Mark()
	err := c.Call("workspace/executeCommand", map[string]any{"command": "warden.test.sleep", "arguments": []any{map[string]any{"ms": 1}}, "workDoneToken": 77}, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	if !strings.Contains(string(end.Params), `"token":77`) {
		t.Errorf("end = %s, want the client's token 77", end.Params)
	}
	if _, ok := c.Find(mark, "window/workDoneProgress/create", nil); ok {
		t.Error("the server created a token although the client gave one")
	}
}

func TestFailedJobIsShown(t *testing.T) {
	c := startTest(t)
	if _, err := c.ExecuteCommand("warden.test.sleep", map[string]any{"ms": 1, "fail": true}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains("asked to fail"))
	c.WaitFor("$/progress", func(m lsptest.Message) bool {
		return lsptest.ProgressKind("end")(m) && strings.Contains(string(m.Params), "failed: asked to fail")
	})
}

func TestJobArgumentsAreValidatedBeforeItStarts(t *testing.T) {
	c := startTest(t)
	_, err := c.ExecuteCommand("warden.test.sleep", map[string]any{"ms": "soon"})
	if err == nil || !strings.Contains(err.Error(), "arguments[0].ms") {
		t.Fatalf("bad argument: %v", err)
	}
	_, err = c.ExecuteCommand("warden.test.sleep")
	if err == nil || !strings.Contains(err.Error(), "arguments[0] is missing") {
		t.Fatalf("missing argument: %v", err)
	}
	if st := c.Status(); len(st.Jobs) != 0 {
		t.Errorf("a rejected command started a job: %+v", st.Jobs)
	}
}

func TestCancelRequestWithNumericIDCancelsTheJob(t *testing.T) {
	c := startTest(t)
	release := make(chan struct{})
	defer close(release)
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Dismiss()))
	mark := c.Mark()
	p := c.Go("workspace/executeCommand", map[string]any{"command": "warden.test.ask", "arguments": []any{askArgs("Allow?", "Allow once", "Deny")}})
	if err := p.Wait(nil); err != nil {
		t.Fatal(err)
	}
	ask := c.WaitFrom(mark, "window/showMessageRequest", nil)
	p.Cancel() // {"id": <number>}
	c.WaitFrom(mark, "$/progress", func(m lsptest.Message) bool {
		return lsptest.ProgressKind("end")(m) && strings.Contains(string(m.Params), "cancelled")
	})
	// The server withdrew its pending dialog too.
	c.WaitFrom(mark, "$/cancelRequest", func(m lsptest.Message) bool {
		var cp struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(m.Params, &cp)
		return string(cp.ID) == string(ask.ID)
	})
	if st := c.Status(); len(st.Jobs) != 0 {
		t.Errorf("jobs after cancel: %+v", st.Jobs)
	}
}

func TestWorkDoneProgressCancelCancelsTheJob(t *testing.T) {
	c := startTest(t)
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.test.sleep", map[string]any{"ms": 60000}); err != nil {
		t.Fatal(err)
	}
	begin := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("begin"))
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	json.Unmarshal(begin.Params, &p)
	c.Notify("window/workDoneProgress/cancel", map[string]any{"token": p.Token})
	c.WaitFrom(mark, "$/progress", func(m lsptest.Message) bool {
		return lsptest.ProgressKind("end")(m) && strings.Contains(string(m.Params), "cancelled")
	})
}

func TestApplyEditSendsMixedDocumentChanges(t *testing.T) {
	c := startTest(t)
	got := make(chan json.RawMessage, 1)
	c.OnRequest("workspace/applyEdit", lsptest.Record(got, lsptest.Applied(true)))
	v := int32(3)
	edit := wire.ApplyWorkspaceEditParams{Label: "agent patch", Edit: wire.WorkspaceEdit{
		DocumentChanges: []wire.DocumentChange{
			{TextDocumentEdit: &wire.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: c.URI("a.go")}, Version: &v},
				Edits:        []wire.AnnotatedTextEdit{{Range: rng(0, 0, 0, 0), NewText: "// hi\n", AnnotationID: "a1"}},
			}},
			{CreateFile: &protocol.CreateFile{URI: c.URI("new.go")}},
			{TextDocumentEdit: &wire.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: c.URI("new.go")}},
				Edits:        []wire.AnnotatedTextEdit{{Range: rng(0, 0, 0, 0), NewText: "package a\n"}},
			}},
			{RenameFile: &protocol.RenameFile{OldURI: c.URI("b.go"), NewURI: c.URI("c.go")}},
			{DeleteFile: &protocol.DeleteFile{URI: c.URI("d.go")}},
		},
		ChangeAnnotations: map[string]protocol.ChangeAnnotation{"a1": {Label: "agent", NeedsConfirmation: true}},
	}}
	if _, err := c.ExecuteCommand("warden.test.applyEdit", edit); err != nil {
		t.Fatal(err)
	}
	var params json.RawMessage
	select {
	case params = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("no applyEdit")
	}
	for _, want := range []string{`"version":3`, `"version":null`, `"annotationId":"a1"`, `"kind":"create"`, `"kind":"rename"`, `"oldUri"`, `"kind":"delete"`, `"needsConfirmation":true`, `"label":"agent patch"`} {
		if !strings.Contains(string(params), want) {
			t.Errorf("applyEdit params lack %s:\n%s", want, params)
		}
	}
	// The wire shape decodes back into the same union.
	var back wire.ApplyWorkspaceEditParams
	if err := json.Unmarshal(params, &back); err != nil {
		t.Fatal(err)
	}
	dc := back.Edit.DocumentChanges
	if len(dc) != 5 || dc[0].TextDocumentEdit == nil || dc[1].CreateFile == nil || dc[2].TextDocumentEdit == nil || dc[2].TextDocumentEdit.TextDocument.Version != nil || dc[3].RenameFile == nil || dc[4].DeleteFile == nil {
		t.Errorf("round trip = %+v", dc)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains(`test: applyEdit {"applied":true}`))
}

func TestShowDocumentAndAClientWithoutIt(t *testing.T) {
	c := startTest(t)
	c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) { return map[string]bool{"success": true}, nil })
	if _, err := c.ExecuteCommand("warden.test.showDocument", map[string]any{"uri": "https://example.com", "external": true}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains("success=true"))

	// Neovim 0.7 answers MethodNotFound: the job fails with a clear message.
	c.OnRequest("window/showDocument", nil)
	if _, err := c.ExecuteCommand("warden.test.showDocument", map[string]any{"uri": "file:///x"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains("window/showDocument"))
}

func TestCodeActionResolveRoundTrip(t *testing.T) {
	c := startTest(t)
	uri := c.Open("a.txt", "plaintext", "hello world\n")
	var actions []wire.CodeAction
	err := c.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        rng(0, 0, 0, 5),
		"context": map[string]any{
			"diagnostics": []any{map[string]any{"range": rng(0, 0, 0, 5), "message": "shouty"}},
			"only":        []string{"refactor"},
		},
	}, &actions)
	if err != nil {
		t.Fatal(err)
	}
	// Other providers (the agent's refactor.warden.* actions) may answer too;
	// this test is about the test provider's.
	actions = slices.DeleteFunc(actions, func(a wire.CodeAction) bool { return strings.HasPrefix(string(a.Kind), "refactor.warden.") })
	if len(actions) != 1 || actions[0].Kind != "refactor.rewrite" || actions[0].Edit != nil {
		t.Fatalf("only=refactor: %+v", actions)
	}
	var resolved wire.CodeAction
	if err := c.Call("codeAction/resolve", actions[0], &resolved); err != nil {
		t.Fatal(err)
	}
	if resolved.Edit == nil || len(resolved.Edit.DocumentChanges) != 1 || resolved.Edit.DocumentChanges[0].TextDocumentEdit.Edits[0].NewText != "HELLO" {
		t.Fatalf("resolved = %+v", resolved)
	}
	if string(resolved.Data) != string(actions[0].Data) {
		t.Errorf("resolve changed data: %s vs %s", resolved.Data, actions[0].Data)
	}
	// An action without data (a command action) resolves to itself, as
	// Neovim resolves every action that has no edit.
	plain := actions[0]
	plain.Data = nil
	plain.Command = &protocol.Command{Title: "t", Command: "warden.status"}
	var same wire.CodeAction
	if err := c.Call("codeAction/resolve", plain, &same); err != nil {
		t.Fatalf("resolve without data: %v", err)
	}
	if same.Command == nil || same.Command.Command != "warden.status" || same.Edit != nil || same.Title != plain.Title {
		t.Errorf("resolve without data changed the action: %+v", same)
	}
	bad := actions[0]
	bad.Data = json.RawMessage(`{"x":1}`)
	if err := c.Call("codeAction/resolve", bad, nil); err == nil || !strings.Contains(err.Error(), "params.data") {
		t.Errorf("resolve with foreign data: %v", err)
	}
}

// An editor that goes away while a dialog is open: the pending call fails
// (for approvals, a denial), the job ends, and the server exits.
func TestLostClientEndsPendingCallsAndExits(t *testing.T) {
	c := startTest(t)
	release := make(chan struct{})
	defer close(release)
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Choose("Allow once")))
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.test.ask", askArgs("Allow?", "Allow once", "Deny")); err != nil {
		t.Fatal(err)
	}
	c.WaitFrom(mark, "window/showMessageRequest", nil)
	c.CloseStdin()
	if code := c.WaitExit(); code != 1 {
		t.Errorf("exit status after losing the editor = %d, want 1 (no shutdown)", code)
	}
	c.WaitLog("job cancelled")
	if strings.Contains(c.Stderr(), "chose Allow once") {
		t.Error("the job went on as if allowed")
	}
}

func TestClientCallFromAHandlerIsRefusedNotDeadlocked(t *testing.T) {
	c := startTest(t)
	raw, err := c.ExecuteCommand("warden.test.callFromHandler")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "would deadlock") {
		t.Errorf("answer %s", raw)
	}
	c.Status()
}
