package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
)

// scriptedRunner stands in for the approvals orchestrator: it answers each
// command with the next scripted result and records what it was asked.
type scriptedRunner struct {
	mu      sync.Mutex
	results []CommandResult
	got     []Command
	block   bool // wait for ctx instead of answering
	started chan struct{}
}

func (r *scriptedRunner) RunCommand(ctx context.Context, cmd Command) (CommandResult, error) {
	r.mu.Lock()
	r.got = append(r.got, cmd)
	block := r.block
	var res CommandResult
	if len(r.results) > 0 {
		res, r.results = r.results[0], r.results[1:]
	}
	r.mu.Unlock()
	if block {
		close(r.started)
		<-ctx.Done()
		return CommandResult{}, ctx.Err()
	}
	return res, nil
}

type scriptedPatcher struct {
	inputs []string
	result PatchResult
	err    error
}

func (p *scriptedPatcher) ApplyPatch(_ context.Context, input, _ string) (PatchResult, error) {
	p.inputs = append(p.inputs, input)
	return p.result, p.err
}

type recordingObserver struct {
	mu    sync.Mutex
	steps []string
	plans [][]PlanStep
}

func (o *recordingObserver) Step(s string) { o.mu.Lock(); o.steps = append(o.steps, s); o.mu.Unlock() }
func (o *recordingObserver) Plan(p []PlanStep) {
	o.mu.Lock()
	o.plans = append(o.plans, p)
	o.mu.Unlock()
}

// buffers is an editor's view: some files differ from the disk.
type buffers map[string]string

func (b buffers) ReadFile(path string) ([]byte, error) {
	if s, ok := b[path]; ok {
		return []byte(s), nil
	}
	return os.ReadFile(path)
}

type fixture struct {
	dir     string
	srv     *modeltest.Server
	runner  *scriptedRunner
	patcher *scriptedPatcher
	obs     *recordingObserver
	sess    *Session
	state   string
}

func newFixture(t *testing.T, turns ...modeltest.Turn) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), state: t.TempDir(), srv: modeltest.New(t, turns...),
		runner: &scriptedRunner{started: make(chan struct{})}, patcher: &scriptedPatcher{}, obs: &recordingObserver{}}
	os.WriteFile(filepath.Join(f.dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.Mkdir(filepath.Join(f.dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(f.dir, "pkg", "a.go"), []byte("package pkg\n"), 0o644)
	sess, err := NewSession(SessionConfig{
		Model: testClient(t, f.srv.URL),
		Env: ToolEnv{Dir: f.dir, Runner: f.runner, Patcher: f.patcher, Observer: f.obs,
			Files: buffers{filepath.Join(f.dir, "main.go"): "package main // unsaved edit\n"}},
		Facts:         []string{"Sandbox: workspace-write"},
		TranscriptDir: f.state,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	f.sess = sess
	return f
}

// toolMessage returns what the model was sent for the call with id in its
// next request.
func (f *fixture) toolMessage(t *testing.T, id string) string {
	t.Helper()
	for _, req := range f.srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content
			}
		}
	}
	t.Fatalf("the model never received a result for call %s", id)
	return ""
}

func call(id, name, args string) modeltest.Call {
	return modeltest.Call{ID: id, Name: name, Args: args}
}

func TestSessionFullTask(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Text: "Planning.", Calls: []modeltest.Call{
			call("plan", "update_plan", `{"plan":[{"step":"read","status":"in_progress"},{"step":"fix","status":"pending"}]}`),
			call("read", "read_file", `{"path":"main.go"}`),
			call("ls", "list_dir", `{"path":".","depth":2}`),
		}},
		modeltest.Turn{Calls: []modeltest.Call{call("rm", "shell", `{"command":["rm","-rf","/tmp/x"],"justification":"clean"}`)}},
		modeltest.Turn{Calls: []modeltest.Call{call("test", "shell", `{"command":["go","test","./..."],"workdir":"pkg","timeout_ms":5000}`)}},
		modeltest.Turn{Calls: []modeltest.Call{call("patch", "apply_patch", `{"input":"*** Begin Patch\n*** Update File: main.go\n@@\n-package main\n+package main // fixed\n*** End Patch\n"}`)}},
		modeltest.Turn{Text: "Fixed main.go."},
	)
	f.runner.results = []CommandResult{
		{Verdict: Denied, Reason: "you chose Deny"},
		{Verdict: Ran, ExitCode: 1, Output: "FAIL pkg\n", Sandboxed: true, Duration: 300 * time.Millisecond},
	}
	f.patcher.result = PatchResult{Summary: "Applied: M main.go (1 hunk of 1 accepted)"}

	res, err := f.sess.Run(context.Background(), "fix main")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "Fixed main.go." || res.Stopped || res.Turns != 5 {
		t.Errorf("result = %+v", res)
	}
	if got := f.toolMessage(t, "read"); !strings.Contains(got, "     1\tpackage main // unsaved edit") {
		t.Errorf("read_file did not come from the buffer: %q", got)
	}
	if got := f.toolMessage(t, "ls"); !strings.Contains(got, "  pkg/\n    a.go\n") || !strings.Contains(got, "  main.go\n") {
		t.Errorf("list_dir = %q", got)
	}
	if got := f.toolMessage(t, "rm"); !strings.Contains(got, "denied") || !strings.Contains(got, "you chose Deny") || !strings.Contains(got, "do not run it again") {
		t.Errorf("denial reported as %q", got)
	}
	if got := f.toolMessage(t, "test"); !strings.Contains(got, "Exit code: 1") || !strings.Contains(got, "Sandboxed: yes") || !strings.Contains(got, "FAIL pkg") {
		t.Errorf("command result = %q", got)
	}
	if got := f.toolMessage(t, "patch"); got != "Applied: M main.go (1 hunk of 1 accepted)" {
		t.Errorf("patch result = %q", got)
	}
	if len(f.runner.got) != 2 {
		t.Fatalf("runner asked %d times", len(f.runner.got))
	}
	if c := f.runner.got[1]; c.Dir != filepath.Join(f.dir, "pkg") || c.Timeout != 5*time.Second || strings.Join(c.Argv, " ") != "go test ./..." {
		t.Errorf("command = %+v", c)
	}
	if len(f.patcher.inputs) != 1 || !strings.HasPrefix(f.patcher.inputs[0], "*** Begin Patch") {
		t.Errorf("patch inputs = %q", f.patcher.inputs)
	}
	if len(f.obs.plans) != 1 || f.obs.plans[0][0].Status != "in_progress" {
		t.Errorf("plans = %+v", f.obs.plans)
	}
	if !contains(f.obs.steps, "Running go test ./...") {
		t.Errorf("steps = %q", f.obs.steps)
	}
	// The system prompt and the environment facts reach the model.
	first := f.srv.Requests()[0].Messages[0]
	if first.Role != "system" || !strings.Contains(first.Content, "apply_patch") || !strings.Contains(first.Content, "Sandbox: workspace-write") {
		t.Errorf("system message = %.200q", first.Content)
	}
	checkTranscript(t, f.sess.Transcript, "fix main", "Fixed main.go.")
}

func checkTranscript(t *testing.T, tr *Transcript, task, answer string) {
	t.Helper()
	file, err := os.Open(tr.JSONLPath)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var kinds []string
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) == 0 || kinds[0] != "task" || kinds[len(kinds)-1] != "answer" {
		t.Errorf("transcript kinds = %q", kinds)
	}
	md, _ := os.ReadFile(tr.MarkdownPath)
	if !strings.Contains(string(md), "## Task") || !strings.Contains(string(md), task) || !strings.Contains(string(md), "## Answer") || !strings.Contains(string(md), answer) {
		t.Errorf("markdown transcript:\n%s", md)
	}
	if st, _ := os.Stat(tr.JSONLPath); st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode %v", st.Mode().Perm())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSessionBadToolCallsGetClearMessages(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{
			call("bad-json", "read_file", `{"path": "main.go"`),
			call("unknown", "delete_everything", `{}`),
			call("wrong-type", "shell", `{"command":"ls -la"}`),
			call("extra", "read_file", `{"path":"main.go","encoding":"latin1"}`),
			call("outside", "read_file", `{"path":"../../etc/passwd"}`),
			call("escalate", "shell", `{"command":["curl","x"],"sandbox_permissions":"require_escalated"}`),
			call("prefix", "shell", `{"command":["go","test"],"prefix_rule":["go","build"]}`),
			call("plan", "update_plan", `{"plan":[{"step":"a","status":"doing"}]}`),
		}},
		modeltest.Turn{Text: "ok"},
	)
	res, err := f.sess.Run(context.Background(), "try things")
	if err != nil || res.Answer != "ok" {
		t.Fatalf("res %+v err %v", res, err)
	}
	for id, want := range map[string]string{
		"bad-json":   "not valid JSON",
		"unknown":    `there is no tool "delete_everything"; the tools are apply_patch, list_dir, read_file, shell, update_plan`,
		"wrong-type": `argument "command" must be an array of strings, not a JSON string`,
		"extra":      `unknown field "encoding"`,
		"outside":    "outside the readable roots",
		"escalate":   `needs a "justification"`,
		"prefix":     `"prefix_rule" must be a prefix of "command"`,
		"plan":       `status must be pending, in_progress or completed, not "doing"`,
	} {
		if got := f.toolMessage(t, id); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
			t.Errorf("%s: model got %q, want it to contain %q", id, got, want)
		}
	}
	if len(f.runner.got) != 0 {
		t.Errorf("invalid calls reached the runner: %+v", f.runner.got)
	}
}

func TestSessionStopsAModelThatRepeatsADeniedCall(t *testing.T) {
	rm := call("", "shell", `{"command":["rm","-rf","build"]}`)
	rmSpaced := call("", "shell", `{ "command": ["rm", "-rf", "build"] }`)
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{rm}},
		modeltest.Turn{Calls: []modeltest.Call{rmSpaced}},
		modeltest.Turn{Calls: []modeltest.Call{rm}},
		modeltest.Turn{Calls: []modeltest.Call{rm}},
	)
	f.runner.results = []CommandResult{{Verdict: Denied}}
	res, err := f.sess.Run(context.Background(), "clean")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || !strings.Contains(res.Reason, "`rm -rf build`") || !strings.Contains(res.Reason, "after it was denied") {
		t.Errorf("result = %+v", res)
	}
	if len(f.runner.got) != 1 {
		t.Errorf("the user was asked %d times for the same denied call", len(f.runner.got))
	}
	if n := len(f.srv.Requests()); n != 4 {
		t.Errorf("%d model requests, want 4", n)
	}
	last := f.srv.Requests()[3].Last()
	if !strings.Contains(last.Content, "already denied") {
		t.Errorf("repeat answered with %q", last.Content)
	}
	// The session stays usable.
	f.srv.Push(modeltest.Turn{Text: "fine"})
	if res, err := f.sess.Run(context.Background(), "something else"); err != nil || res.Answer != "fine" {
		t.Errorf("follow-up: %+v %v", res, err)
	}
}

func TestSessionDenyAndStopEndsTheTurn(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{
			call("push", "shell", `{"command":["git","push","--force"]}`),
			call("after", "shell", `{"command":["echo","later"]}`),
		}},
	)
	f.runner.results = []CommandResult{{Verdict: Stopped}}
	res, err := f.sess.Run(context.Background(), "ship it")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || !strings.Contains(res.Reason, "stopped the task") || len(f.runner.got) != 1 {
		t.Errorf("result %+v after %d commands", res, len(f.runner.got))
	}
	// The next task sends a valid conversation: a tool message for both calls.
	f.srv.Push(modeltest.Turn{Text: "ok"})
	if _, err := f.sess.Run(context.Background(), "status?"); err != nil {
		t.Fatal(err)
	}
	if got := f.toolMessage(t, "push"); !strings.Contains(got, "stopped the task") {
		t.Errorf("push: %q", got)
	}
	if got := f.toolMessage(t, "after"); !strings.Contains(got, "Not run") {
		t.Errorf("after: %q", got)
	}
}

func TestSessionTruncatesHugeOutput(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{call("big", "shell", `{"command":["yes"]}`)}},
		modeltest.Turn{Text: "done"},
	)
	huge := "first line\n" + strings.Repeat("y\n", 5<<20) + "last line\n"
	f.runner.results = []CommandResult{{Verdict: Ran, Output: huge}}
	if _, err := f.sess.Run(context.Background(), "flood"); err != nil {
		t.Fatal(err)
	}
	got := f.toolMessage(t, "big")
	if len(got) > MaxToolOutput {
		t.Errorf("model got %d bytes", len(got))
	}
	for _, want := range []string{"first line", "last line", "omitted from the middle", "bytes of output"} {
		if !strings.Contains(got, want) {
			t.Errorf("truncated output lacks %q", want)
		}
	}
}

func TestSessionCancelStopsTheStream(t *testing.T) {
	f := newFixture(t, modeltest.Turn{Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := f.sess.Run(ctx, "long"); done <- err }()
	<-f.srv.Served()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	select {
	case <-f.srv.Canceled():
	case <-time.After(5 * time.Second):
		t.Fatal("stream not closed")
	}
}

func TestSessionCancelStopsTheCommand(t *testing.T) {
	f := newFixture(t, modeltest.Turn{Calls: []modeltest.Call{call("sleep", "shell", `{"command":["sleep","100"]}`)}})
	f.runner.block = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := f.sess.Run(ctx, "wait"); done <- err }()
	<-f.runner.started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	// The conversation holds a result for the cancelled call, so it can go on.
	f.srv.Push(modeltest.Turn{Text: "ok"})
	if _, err := f.sess.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if got := f.toolMessage(t, "sleep"); !strings.Contains(got, "Cancelled") {
		t.Errorf("cancelled call reported as %q", got)
	}
}
