package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/wire"
)

// startAgentServer runs warden serve against the fake model, with an editor
// that applies edits to its buffers.
func startAgentServer(t *testing.T, srv *modeltest.Server, caps map[string]any, env ...string) (*lsptest.Client, *fakeEditor) {
	t.Helper()
	env = append(env, "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model")
	c, ed := startPatchServer(t, caps, env...)
	c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) {
		return wire.ShowDocumentResult{Success: true}, nil
	})
	return c, ed
}

// runAction executes a code action's command and returns the job id.
func runAction(t *testing.T, c *lsptest.Client, a wire.CodeAction) string {
	t.Helper()
	if a.Command == nil {
		t.Fatalf("action %q has no command", a.Title)
	}
	raw, err := c.ExecuteCommand(a.Command.Command, a.Command.Arguments...)
	if err != nil {
		t.Fatalf("%s: %v", a.Title, err)
	}
	var started lsp.JobStarted
	if err := json.Unmarshal(raw, &started); err != nil || started.JobID == "" {
		t.Fatalf("%s answered %s", a.Title, raw)
	}
	return started.JobID
}

func findAction(t *testing.T, actions []wire.CodeAction, title string) wire.CodeAction {
	t.Helper()
	var titles []string
	for _, a := range actions {
		if a.Title == title {
			return a
		}
		titles = append(titles, a.Title)
	}
	t.Fatalf("no action %q among %q", title, titles)
	return wire.CodeAction{}
}

// progressEnd waits for the $/progress end of the job started after mark
// and returns its message.
func progressEnd(t *testing.T, c *lsptest.Client, mark int) string {
	t.Helper()
	end := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	var p struct {
		Value struct {
			Message string `json:"message"`
		} `json:"value"`
	}
	end.Decode(&p)
	return p.Value.Message
}

func toolResult(t *testing.T, srv *modeltest.Server, id string) string {
	t.Helper()
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content
			}
		}
	}
	t.Fatalf("the model never received a result for %s", id)
	return ""
}

const agentSource = "package main\n\nfunc main() {\n\t// warden: print hello\n}\n"

// The whole story: a `warden:` comment becomes a code action; the agent
// reads the unsaved buffer, asks to delete a directory (the dialog shows
// high risk and the user denies), patches the buffer at its version, and
// answers. The model hears exactly what happened; progress ends; the
// transcript opens.
func TestAgentStory(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Text: "Looking. ", Chunk: 3, Calls: []modeltest.Call{
			{ID: "plan", Name: "update_plan", Args: `{"plan":[{"step":"read main.go","status":"in_progress"},{"step":"print hello","status":"pending"}]}`},
			{ID: "read", Name: "read_file", Args: `{"path":"main.go"}`},
		}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "rm", Name: "shell", Args: `{"command":["rm","-rf","build"],"justification":"start clean"}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\t// warden: print hello\n+\tprintln(\"hello\")\n*** End Patch\n"}`}}},
		modeltest.Turn{Text: "main now prints hello."},
	)
	c, ed := startAgentServer(t, srv, lsptest.FullCapabilities())
	// build/ holds a repository's data, so deleting it is high risk (a small
	// rm -rf inside the writable roots runs sandboxed under on-request).
	write(t, c.Dir, map[string]string{"main.go": "package main // on disk\n", "build/a.o": "x", "build/b.o": "y", "build/dep/.git/HEAD": "ref: refs/heads/main\n"})
	uri := ed.open("main.go", agentSource)
	ed.type_(uri, agentSource) // version 2, unsaved
	dialogs := make(chan json.RawMessage, 4)
	c.OnRequest("window/showMessageRequest", lsptest.Record(dialogs, lsptest.Choose("Deny")))

	actions := c.CodeActions(uri, protocol.Range{Start: protocol.Position{Line: 3, Character: 2}, End: protocol.Position{Line: 3, Character: 2}})
	for _, a := range actions {
		if a.Title == "Warden: Fix with agent" || a.Title == "Warden: Ask agent…" {
			t.Errorf("offered %q without diagnostics / without a client that asks", a.Title)
		}
	}
	findAction(t, actions, "Warden: Explain")
	findAction(t, actions, "Warden: Write tests")
	mark := c.Mark()
	runAction(t, c, findAction(t, actions, "Warden: Do what this comment says"))

	if msg := progressEnd(t, c, mark); msg != "done" {
		t.Errorf("progress ended with %q", msg)
	}
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: agent: main now prints hello."))

	// The task carried the comment's instruction and its place.
	task := srv.Requests()[0].Messages[1].Content
	if !strings.Contains(task, "print hello") || !strings.Contains(task, filepath.Join(c.Dir, "main.go")+" (line 4)") {
		t.Errorf("task = %q", task)
	}
	// The model read the unsaved buffer, not the disk.
	if got := toolResult(t, srv, "read"); !strings.Contains(got, "// warden: print hello") {
		t.Errorf("read_file = %q", got)
	}
	// The dialog: the command, its risk, and no session approval for high risk.
	var dialog protocol.ShowMessageRequestParams
	select {
	case raw := <-dialogs:
		json.Unmarshal(raw, &dialog)
	default:
		t.Fatalf("no dialog; the model was told %q", toolResult(t, srv, "rm"))
	}
	for _, want := range []string{"rm -rf build", "start clean", "Risk: high", "in " + c.Dir} {
		if !strings.Contains(dialog.Message, want) {
			t.Errorf("dialog lacks %q:\n%s", want, dialog.Message)
		}
	}
	var titles []string
	for _, a := range dialog.Actions {
		titles = append(titles, a.Title)
	}
	if strings.Join(titles, "|") != "Deny|Allow once|Deny and stop" || dialog.Type != protocol.MessageTypeError {
		t.Errorf("high-risk dialog: type %v, actions %q", dialog.Type, titles)
	}
	if got := toolResult(t, srv, "rm"); !strings.Contains(got, "The user denied this command") {
		t.Errorf("denial reported as %q", got)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "build", "a.o")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	// The edit went to the buffer at its version; the model heard it landed.
	edit := ed.lastEdit()
	te := edit.Edit.DocumentChanges[0].TextDocumentEdit
	if te == nil || te.TextDocument.Version == nil || *te.TextDocument.Version != 2 {
		t.Errorf("edit = %+v, want a TextDocumentEdit at version 2", edit.Edit.DocumentChanges[0])
	}
	if got := ed.text(uri); got != "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := toolResult(t, srv, "patch"); !strings.Contains(got, "M main.go") {
		t.Errorf("patch result = %q", got)
	}
	// Progress showed the plan and the steps.
	var reports []string
	for _, m := range c.Messages()[mark:] {
		if m.Method == "$/progress" && lsptest.ProgressKind("report")(m) {
			var p struct {
				Value struct{ Message string } `json:"value"`
			}
			m.Decode(&p)
			reports = append(reports, p.Value.Message)
		}
	}
	joined := strings.Join(reports, "\n")
	for _, want := range []string{"Model: Looking.", "Plan 0/2: read main.go", "Reading main.go", "Running rm -rf build", "Proposing a patch"} {
		if !strings.Contains(joined, want) {
			t.Errorf("progress lacks %q:\n%s", want, joined)
		}
	}
	// The Markdown transcript was opened and records the story.
	show := c.WaitFrom(mark, "window/showDocument", nil)
	var sd wire.ShowDocumentParams
	show.Decode(&sd)
	md, err := os.ReadFile(strings.TrimPrefix(string(sd.URI), "file://"))
	if err != nil || !strings.Contains(string(md), "print hello") || !strings.Contains(string(md), "main now prints hello.") || !strings.Contains(string(md), "Result: denied") {
		t.Errorf("transcript %s (%v):\n%s", sd.URI, err, md)
	}
}

// Cancelling while the model streams closes the stream at once.
func TestAgentCancelStopsTheStream(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Hold: true})
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	mark := c.Mark()
	raw, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "think hard"})
	if err != nil {
		t.Fatal(err)
	}
	var started lsp.JobStarted
	json.Unmarshal(raw, &started)
	<-srv.Served()
	c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("begin"))
	raw, err = c.ExecuteCommand("warden.agent.cancel", map[string]any{"jobId": started.JobID})
	if err != nil || !strings.Contains(string(raw), `"cancelled":["`+started.JobID+`"]`) {
		t.Fatalf("cancel answered %s, %v", raw, err)
	}
	if msg := progressEnd(t, c, mark); msg != "cancelled" {
		t.Errorf("progress ended with %q", msg)
	}
	select {
	case <-srv.Canceled():
	case <-time.After(20 * time.Second):
		t.Fatal("the model stream was not closed")
	}
	if _, err := c.ExecuteCommand("warden.agent.cancel", map[string]any{"jobId": started.JobID}); err == nil || !strings.Contains(err.Error(), "not a running job") {
		t.Errorf("cancelling a finished job: %v", err)
	}
}

// Cancelling while a command runs kills it (and what it started), and the
// model is not asked again.
func TestAgentCancelStopsTheCommand(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "sleep", Name: "shell", Args: `{"command":["bash","-c","sleep 31.25; echo late"]}`}}},
		modeltest.Turn{Text: "never asked"},
	)
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "wait"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFrom(mark, "$/progress", func(m lsptest.Message) bool {
		return lsptest.ProgressKind("report")(m) && strings.Contains(string(m.Params), "Running bash")
	})
	deadline := time.Now().Add(10 * time.Second)
	for !sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if _, err := c.ExecuteCommand("warden.agent.cancel"); err != nil {
		t.Fatal(err)
	}
	if msg := progressEnd(t, c, mark); msg != "cancelled" {
		t.Errorf("progress ended with %q", msg)
	}
	for sleeping() {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the command still runs after cancel")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the model was asked %d times; a cancelled task must stop", n)
	}
}

// sleeping reports whether a process runs `sleep 31.25`.
func sleeping() bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && string(b) == "sleep\x0031.25\x00" {
			return true
		}
	}
	return false
}

func TestAgentBadRequests(t *testing.T) {
	srv := modeltest.New(t)
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	for args, want := range map[string]string{
		`[]`:                   "takes one argument",
		`[{"instruction":""}]`: "instruction is required",
		`[{"instruction":7}]`:  "instruction",
		`[{"instruction":"x","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}]`: "range needs",
		`[{"instruction":"x","uri":"untitled:1"}]`:                                                        "not a file: URI",
	} {
		var a []any
		json.Unmarshal([]byte(args), &a)
		_, err := c.ExecuteCommand("warden.agent.run", a...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("a rejected request reached the model")
	}
}

func TestAgentWithoutAModelSaysHowToConfigureOne(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	// The answer says it: no job starts, so no client says "agent started".
	raw, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "hello"})
	if err == nil || !strings.Contains(err.Error(), "no model configured") {
		t.Fatalf("warden.agent.run without a model answered %s, %v", raw, err)
	}
	for _, want := range []string{"WARDEN_MODEL", "OPENAI_BASE_URL", "config.toml", "[model]", `{"model": {"name", "baseURL", "apiKey"}}`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	if _, begun := c.Find(mark, "$/progress", lsptest.ProgressKind("begin")); begun {
		t.Error("a job began without a model")
	}
	// Everything else keeps working.
	if st := c.Status(); st.Version == "" {
		t.Errorf("status = %+v", st)
	}
}

// Fix with agent is a quickfix for the diagnostics in range, and the model
// gets them with the code.
func TestAgentFixWithDiagnostics(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: "Fixed nothing; this is a test."})
	c, ed := startAgentServer(t, srv, lsptest.FullCapabilities())
	uri := ed.open("main.go", agentSource)
	diag := protocol.Diagnostic{Range: protocol.Range{Start: protocol.Position{Line: 2, Character: 5}, End: protocol.Position{Line: 2, Character: 9}},
		Message: "main redeclared in this block", Source: "compiler"}
	var actions []wire.CodeAction
	err := c.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        diag.Range,
		"context":      map[string]any{"diagnostics": []any{diag}, "only": []string{"quickfix"}},
	}, &actions)
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Title != "Warden: Fix with agent" || actions[0].Kind != protocol.QuickFix || len(actions[0].Diagnostics) != 1 {
		t.Fatalf("quickfix actions = %+v", actions)
	}
	mark := c.Mark()
	runAction(t, c, actions[0])
	progressEnd(t, c, mark)
	task := srv.Requests()[0].Messages[1].Content
	for _, want := range []string{"Fix the problems", "line 3: main redeclared in this block (compiler)", "func main() {"} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
}

// Clients that send a mode (the Neovim plugin's :Warden fix / explain) get
// the built-in instruction, with theirs added.
func TestAgentRunModes(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: "a"}, modeltest.Turn{Text: "b"}, modeltest.Turn{Text: "c"})
	c, ed := startAgentServer(t, srv, lsptest.FullCapabilities())
	uri := ed.open("main.go", agentSource)
	line := protocol.Range{Start: protocol.Position{Line: 3}, End: protocol.Position{Line: 3, Character: 4}}
	for _, args := range []map[string]any{
		{"mode": "explain", "uri": uri, "range": line},
		{"mode": "fix", "instruction": "keep the API", "uri": uri, "range": line},
		{"mode": "comment", "uri": uri, "range": line},
	} {
		mark := c.Mark()
		if _, err := c.ExecuteCommand("warden.agent.run", args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		progressEnd(t, c, mark)
	}
	reqs := srv.Requests()
	for i, want := range []string{"Explain what the selected code does", "Fix the problems the editor reports below. Make the smallest change that fixes them, then check it if you can.\n\nThe user adds: keep the API", "Do what this comment in the code says, then remove the comment: print hello"} {
		if got := reqs[i].Messages[1].Content; !strings.HasPrefix(got, want) {
			t.Errorf("mode %d: task %q, want it to start with %q", i, got, want)
		}
	}
	for args, want := range map[string]string{
		`{"mode":"dance"}`:   `mode "dance": want fix, explain, tests, comment or ask`,
		`{"mode":"ask"}`:     "instruction is required",
		`{"mode":"comment"}`: "needs a range holding a `warden:` comment",
	} {
		var a any
		json.Unmarshal([]byte(args), &a)
		if _, err := c.ExecuteCommand("warden.agent.run", a); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
}

// warden.policy.set changes what the next command needs: under never, a
// risky command the agent asks for is refused without a dialog, and the
// model is told.
func TestPolicySet(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "rm", Name: "shell", Args: `{"command":["rm","-rf","build"]}`}}},
		modeltest.Turn{Text: "I could not clean up."},
	)
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	// build/ holds a repository's data: deleting it is high risk, which the
	// sandbox would not stop, so never refuses it (a small rm -rf inside the
	// writable roots would run sandboxed).
	write(t, c.Dir, map[string]string{"build/a.o": "x", "build/dep/.git/HEAD": "ref: refs/heads/main\n"})
	raw, err := c.ExecuteCommand("warden.policy.set", map[string]any{"approvalPolicy": "never", "networkAccess": true})
	if err != nil {
		t.Fatal(err)
	}
	var pol lsp.StatusPolicy
	json.Unmarshal(raw, &pol)
	if pol.ApprovalPolicy != "never" || !pol.NetworkAccess || pol.SandboxMode != "workspace-write" {
		t.Errorf("policy = %+v", pol)
	}
	if st := c.Status(); st.Policy.ApprovalPolicy != "never" {
		t.Errorf("status policy = %+v", st.Policy)
	}
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "clean up"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	if _, asked := c.Find(mark, "window/showMessageRequest", nil); asked {
		t.Error("a dialog was shown under the never policy")
	}
	if got := toolResult(t, srv, "rm"); !strings.Contains(got, "denied") && !strings.Contains(got, "forbids") {
		t.Errorf("the model was told %q", got)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "build", "a.o")); err != nil {
		t.Errorf("the refused command ran: %v", err)
	}
	for args, want := range map[string]string{
		`{"approvalPolicy":"sometimes"}`: `approval_policy "sometimes"`,
		`{"sandbox":"read-only"}`:        "the policy fields are approvalPolicy",
		`{}`:                             "sets nothing",
		`{"networkAccess":"yes"}`:        "networkAccess",
	} {
		var a any
		json.Unmarshal([]byte(args), &a)
		if _, err := c.ExecuteCommand("warden.policy.set", a); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
	if st := c.Status(); st.Policy.ApprovalPolicy != "never" || !st.Policy.NetworkAccess {
		t.Errorf("a rejected change altered the policy: %+v", st.Policy)
	}
}

// The model may come from the editor's settings instead of the environment.
func TestAgentModelFromEditorSettings(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: "configured from the editor"})
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(map[string]any{"model": map[string]any{"name": "editor-model", "baseURL": srv.URL}})
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "hi"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("configured from the editor"))
	if got := srv.Requests()[0].Model; got != "editor-model" {
		t.Errorf("model %q", got)
	}
}

// When the user accepts only part of a patch (VS Code's Refactor Preview),
// the model is told exactly which hunks landed.
func TestAgentPartialPatchReportedToTheModel(t *testing.T) {
	patchText := "*** Begin Patch\n*** Update File: list.txt\n@@\n-one\n+ONE\n@@\n-nine\n+NINE\n*** End Patch\n"
	args, _ := json.Marshal(map[string]string{"input": patchText})
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: string(args)}}},
		modeltest.Turn{Text: "done"},
	)
	c, ed := startAgentServer(t, srv, lsptest.FullCapabilities())
	text := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	write(t, c.Dir, map[string]string{"list.txt": text})
	uri := ed.open("list.txt", text)
	ticked := false
	ed.accept = func(string) bool { ok := !ticked; ticked = true; return ok } // tick one hunk only
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "shout"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	got := toolResult(t, srv, "patch")
	landed := ""
	switch ed.text(uri) {
	case strings.Replace(text, "one", "ONE", 1):
		landed = "only chunks 1 of 2"
	case strings.Replace(text, "nine", "NINE", 1):
		landed = "only chunks 2 of 2"
	default:
		t.Fatalf("buffer = %q, want exactly one hunk applied", ed.text(uri))
	}
	if !strings.Contains(got, "applied only in part") || !strings.Contains(got, landed) {
		t.Errorf("the buffer shows %s, the model was told %q", landed, got)
	}
}

// With risk_summary on, the dialog carries the model's summary, which raises
// the static level of `make share` (and takes "Allow for session" away); the
// agent's own conversation never sees that side conversation.
func TestAgentModelRiskSummaryInTheDialog(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "up", Name: "shell", Args: `{"command":["make","share"],"justification":"share the notes"}`}}},
		modeltest.Turn{Text: "not shared"},
	)
	srv.Respond(func(req modeltest.Request) modeltest.Turn {
		return modeltest.Turn{Text: `{"summary":"Runs the share target, which may upload notes.txt.","level":"high"}`}
	})
	c := lsptest.Start(t, lsptest.Options{Env: []string{"OPENAI_BASE_URL=" + srv.URL, "WARDEN_MODEL=fake-model"}})
	c.Initialize(map[string]any{"approvalPolicy": "untrusted", "model": map[string]any{"riskSummary": true, "riskDeadline": "2s"}})
	write(t, c.Dir, map[string]string{"notes.txt": "private"})
	dialogs := make(chan json.RawMessage, 1)
	c.OnRequest("window/showMessageRequest", lsptest.Record(dialogs, lsptest.Choose("Deny")))
	c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) { return wire.ShowDocumentResult{Success: true}, nil })
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "share my notes"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	var d protocol.ShowMessageRequestParams
	select {
	case raw := <-dialogs:
		json.Unmarshal(raw, &d)
	default:
		t.Fatalf("no dialog; the model was told %q", toolResult(t, srv, "up"))
	}
	if !strings.Contains(d.Message, "model (high): Runs the share target") || !strings.Contains(d.Message, "Risk: high") || !strings.Contains(d.Message, "raised to high by the model") {
		t.Errorf("dialog:\n%s", d.Message)
	}
	for _, a := range d.Actions {
		if a.Title == "Allow for session" {
			t.Errorf("a high-risk dialog offers %q", a.Title)
		}
	}
	var riskReqs, agentReqs int
	for _, r := range srv.Requests() {
		if r.ResponseFormat != nil {
			riskReqs++
			if len(r.Tools) != 0 {
				t.Error("the risk conversation has tools")
			}
		} else {
			agentReqs++
			for _, m := range r.Messages {
				if strings.Contains(m.Content, "Runs the share target") {
					t.Error("the risk summary leaked into the agent's conversation")
				}
			}
		}
	}
	if riskReqs != 1 || agentReqs != 2 {
		t.Errorf("%d risk requests, %d agent requests", riskReqs, agentReqs)
	}
}

// Warden's own files (a session transcript, config.toml) are never an Ask's
// file context: a plain Ask from one runs without it, and says so; a mode
// that works on the file is refused. The twin: a workspace file is context.
func TestAgentNeverTakesWardenOwnFilesAsContext(t *testing.T) {
	state, conf := t.TempDir(), t.TempDir()
	srv := modeltest.New(t, modeltest.Turn{Text: "a"}, modeltest.Turn{Text: "b"})
	c, ed := startAgentServer(t, srv, lsptest.FullCapabilities(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+conf)
	transcript := filepath.Join(state, "warden", "sessions", "20260101T000000.md")
	os.MkdirAll(filepath.Dir(transcript), 0o700)
	secretish := "# Warden session\n\nthe agent said: TRANSCRIPT-TEXT\n"
	os.WriteFile(transcript, []byte(secretish), 0o600)
	tURI := ed.open(transcript, secretish)
	cURI := ed.open(filepath.Join(conf, "warden", "config.toml"), "approval_policy = \"never\"\n")
	whole := protocol.Range{End: protocol.Position{Line: 3}}

	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "what next?", "uri": tURI, "range": whole}); err != nil {
		t.Fatal(err)
	}
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden's own state directory"))
	progressEnd(t, c, mark)
	task := srv.Requests()[0].Messages[1].Content
	if strings.Contains(task, "TRANSCRIPT-TEXT") || strings.Contains(task, transcript) {
		t.Errorf("the transcript became the Ask's context:\n%s", task)
	}
	for _, mode := range []string{"explain", "fix", "comment"} {
		_, err := c.ExecuteCommand("warden.agent.run", map[string]any{"mode": mode, "instruction": "x", "uri": cURI, "range": whole})
		if err == nil || !strings.Contains(err.Error(), "Warden's own config directory") {
			t.Errorf("%s on config.toml: err %v, want a refusal naming Warden's config directory", mode, err)
		}
	}

	uri := ed.open("main.go", agentSource)
	mark = c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "what next?", "uri": uri, "range": whole}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	if task := srv.Requests()[1].Messages[1].Content; !strings.Contains(task, "func main() {") {
		t.Errorf("a workspace file is no longer the Ask's context:\n%s", task)
	}
}
