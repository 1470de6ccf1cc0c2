package approvals

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary act as the sandbox helper: the sandbox
// re-executes its own executable, which in tests is this binary. The
// approvals tests therefore run commands in the real sandbox.
func TestMain(m *testing.M) {
	testHelper = os.Getenv("WARDEN_BIN")
	var buildDir string
	if testHelper == "" {
		buildDir, testHelper = buildHelper()
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir) // os.Exit skips deferred calls
	}
	os.Exit(code)
}

// buildHelper builds warden into a temporary directory; on failure the tests
// that need the sandbox report the missing helper themselves.
func buildHelper() (dir, bin string) {
	dir, err := os.MkdirTemp("", "approvals-warden")
	if err != nil {
		return "", ""
	}
	bin = filepath.Join(dir, "warden")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/warden")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		return dir, ""
	}
	return dir, bin
}

var testHelper string

// scriptedUser answers prompts the way a person at the dialog would, from
// a list of decisions, and records what it was shown.
type scriptedUser struct {
	mu      sync.Mutex
	answers []ReviewDecision
	asked   []PromptRequest
	block   chan struct{} // when set, Prompt waits for it (a slow human)
	err     error
}

func (u *scriptedUser) Prompt(ctx context.Context, req PromptRequest) (ReviewDecision, error) {
	u.mu.Lock()
	u.asked = append(u.asked, req)
	block := u.block
	u.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return Denied, ctx.Err()
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return Denied, u.err
	}
	if len(u.answers) == 0 {
		return Denied, errors.New("test: unexpected prompt")
	}
	d := u.answers[0]
	u.answers = u.answers[1:]
	return d, nil
}

func (u *scriptedUser) prompts() []PromptRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]PromptRequest(nil), u.asked...)
}

type orchFixture struct {
	ws, rules, state string
	user             *scriptedUser
	o                *Orchestrator
}

func newOrch(t *testing.T, ask AskForApproval, answers ...ReviewDecision) *orchFixture {
	t.Helper()
	if testHelper == "" {
		t.Skip("no warden binary to act as the sandbox helper")
	}
	root := t.TempDir()
	f := &orchFixture{ws: filepath.Join(root, "ws"), rules: filepath.Join(root, "rules"), state: filepath.Join(root, "state"), user: &scriptedUser{answers: answers}}
	os.MkdirAll(f.ws, 0o755)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: f.rules}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := OpenAuditLog(f.state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	f.o = &Orchestrator{
		Policy: Policy{Ask: ask}, Rules: book, RulesDir: f.rules, Prompter: f.user,
		Runner: &SandboxRunner{Helper: testHelper}, Audit: audit,
	}
	return f
}

func (f *orchFixture) exec(t *testing.T, mode SandboxMode, argv ...string) (*ExecOutcome, string) {
	t.Helper()
	var out bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(b) })
	res, err := f.o.Exec(context.Background(), ExecRequest{
		CommandRequest: CommandRequest{Argv: argv, Cwd: f.ws, Sandbox: Sandbox{Mode: mode, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}},
		Stdout:         w, Stderr: w, Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatalf("Exec(%q): %v", argv, err)
	}
	return res, out.String()
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(b []byte) (int, error) { return w(b) }

func (f *orchFixture) auditEvents(t *testing.T) []AuditEvent {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.state, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var ev AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestOrchestratorSafeCommandRunsUnprompted(t *testing.T) {
	f := newOrch(t, Untrusted)
	os.WriteFile(filepath.Join(f.ws, "hello.txt"), []byte("hello from the workspace\n"), 0o644)
	res, out := f.exec(t, WorkspaceWrite, "cat", "hello.txt")
	if !res.Ran || res.Asked || res.Result.ExitCode != 0 || res.Escalated {
		t.Fatalf("outcome %+v", res)
	}
	if !strings.Contains(out, "hello from the workspace") {
		t.Errorf("output %q", out)
	}
	evs := f.auditEvents(t)
	if len(evs) != 2 || evs[0].Event != "requirement" || evs[1].Event != "run" || evs[1].ExitCode == nil || *evs[1].Sandboxed != true {
		t.Errorf("audit %+v", evs)
	}
}

func TestOrchestratorForbiddenRuleStops(t *testing.T) {
	f := newOrch(t, OnRequest)
	writeRules(t, f.rules, "team.rules", `prefix_rule(pattern=["touch"], decision="forbidden", justification="no touching")`)
	f.o.Rules.Reload()
	res, _ := f.exec(t, WorkspaceWrite, "touch", "x")
	if res.Ran || res.Asked || !strings.Contains(res.Refused, "no touching") {
		t.Fatalf("outcome %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "x")); err == nil {
		t.Error("the forbidden command ran")
	}
	evs := f.auditEvents(t)
	if evs[len(evs)-1].Event != "refused" {
		t.Errorf("audit %+v", evs)
	}
}

func TestOrchestratorEachDecision(t *testing.T) {
	// Allow once: runs; the same request asks again.
	f := newOrch(t, Untrusted, Approved, Approved)
	for i := 0; i < 2; i++ {
		res, _ := f.exec(t, WorkspaceWrite, "touch", "once")
		if !res.Ran || !res.Asked || res.Decision != Approved {
			t.Fatalf("allow once #%d: %+v", i, res)
		}
	}
	if n := len(f.user.prompts()); n != 2 {
		t.Errorf("allow once: %d prompts, want 2", n)
	}
	p := f.user.prompts()[0]
	if p.Kind != PromptCommand || p.Command != "touch once" || p.Cwd != f.ws || !p.Sandboxed || len(p.Amendment) == 0 {
		t.Errorf("prompt %+v", p)
	}

	// Allow for session: the second identical request is not asked; another cwd is.
	f = newOrch(t, Untrusted, ApprovedForSession, Approved)
	f.exec(t, WorkspaceWrite, "touch", "session")
	res, _ := f.exec(t, WorkspaceWrite, "touch", "session")
	if !res.Ran || res.Asked {
		t.Errorf("remembered request asked again: %+v", res)
	}
	other := filepath.Join(f.ws, "sub")
	os.Mkdir(other, 0o755)
	res2, err := f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"touch", "session"}, Cwd: other, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}}}})
	if err != nil || !res2.Asked {
		t.Errorf("a different cwd must ask again: %+v %v", res2, err)
	}

	// Always allow: the rule is persisted and the next run is allowed by it.
	f = newOrch(t, Untrusted, ApprovedWithAmendment)
	res, _ = f.exec(t, WorkspaceWrite, "touch", "always")
	if !res.Ran || res.Decision != ApprovedWithAmendment {
		t.Fatalf("always allow: %+v", res)
	}
	data, _ := os.ReadFile(filepath.Join(f.rules, rules.DefaultRulesFile))
	if string(data) != "prefix_rule(pattern=[\"touch\", \"always\"], decision=\"allow\")\n" {
		t.Errorf("default.rules = %q", data)
	}
	res, _ = f.exec(t, WorkspaceWrite, "touch", "always")
	if res.Asked || !res.Ran || res.Escalated || res.Evaluation.BypassSandbox {
		t.Errorf("after always allow: it must run unasked, in the sandbox: %+v", res)
	}
	// A fresh rule book (a restart) reads it back.
	f.o.Rules.Reload()
	if e := f.o.Evaluator().Evaluate(CommandRequest{Argv: []string{"touch", "always", "more"}, Cwd: f.ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}}}); e.Decision != rules.Allow {
		t.Errorf("after reload: %s", e.Decision)
	}

	// Deny: nothing runs, the turn goes on. Deny and stop: Abort.
	f = newOrch(t, Untrusted, Denied, Abort)
	res, _ = f.exec(t, WorkspaceWrite, "touch", "denied")
	if res.Ran || res.Abort || res.Refused != "rejected by user" {
		t.Errorf("deny: %+v", res)
	}
	res, _ = f.exec(t, WorkspaceWrite, "touch", "denied")
	if res.Ran || !res.Abort {
		t.Errorf("deny and stop: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "denied")); err == nil {
		t.Error("a denied command ran")
	}
}

func TestOrchestratorSandboxDenialEscalates(t *testing.T) {
	// The read-only sandbox blocks the write; on-failure offers the retry.
	f := newOrch(t, OnFailure, Approved)
	res, _ := f.exec(t, ReadOnly, "touch", "made-outside")
	prompts := f.user.prompts()
	if len(prompts) != 1 || prompts[0].Kind != PromptRetry || prompts[0].Sandboxed || prompts[0].Blocked == "" {
		t.Fatalf("prompts %+v", prompts)
	}
	if !res.Ran || !res.Escalated || res.Result.ExitCode != 0 {
		t.Fatalf("outcome %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "made-outside")); err != nil {
		t.Errorf("the escalated run did not write: %v", err)
	}
	var sandboxed []bool
	for _, ev := range f.auditEvents(t) {
		if ev.Event == "run" {
			sandboxed = append(sandboxed, *ev.Sandboxed)
		}
	}
	if len(sandboxed) != 2 || !sandboxed[0] || sandboxed[1] {
		t.Errorf("runs sandboxed=%v, want [true false]", sandboxed)
	}

	// A denied retry leaves the sandbox's failure as the result.
	f = newOrch(t, OnFailure, Denied)
	res, _ = f.exec(t, ReadOnly, "touch", "never-made")
	if !res.Ran || res.Escalated || res.Refused == "" || !res.Result.SandboxDenied {
		t.Errorf("denied retry: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "never-made")); err == nil {
		t.Error("file written despite the denied retry")
	}

	// on-request does not offer the retry (the model must ask to escalate).
	f = newOrch(t, OnRequest)
	res, _ = f.exec(t, ReadOnly, "touch", "x")
	if res.Asked || res.Escalated || !strings.Contains(res.Refused, "does not offer a retry") {
		t.Errorf("on-request denial: %+v", res)
	}

	// ...but when the model did ask to escalate a low-risk command, it ran
	// sandboxed first and a sandbox denial puts the retry to the user.
	f = newOrch(t, OnRequest, Approved)
	res, err := f.o.Exec(context.Background(), ExecRequest{
		CommandRequest: CommandRequest{Argv: []string{"touch", "escalated"}, Cwd: f.ws, RequestEscalation: true,
			Sandbox: Sandbox{Mode: ReadOnly, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}},
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	prompts = f.user.prompts()
	if len(prompts) != 1 || prompts[0].Kind != PromptRetry || !res.Escalated || res.Result.ExitCode != 0 {
		t.Errorf("requested escalation after a denial: prompts %+v outcome %+v", prompts, res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "escalated")); err != nil {
		t.Errorf("the approved retry did not write: %v", err)
	}
}

func TestOrchestratorConcurrentIdenticalRequestsShareOnePrompt(t *testing.T) {
	f := newOrch(t, Untrusted, ApprovedForSession)
	f.user.block = make(chan struct{})
	var wg sync.WaitGroup
	var ran atomic.Int32
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"touch", "shared"}, Cwd: f.ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}}}})
			if err == nil && res.Ran {
				ran.Add(1)
			}
		}()
	}
	// Wait until the first prompt is showing, give the others time to queue.
	for len(f.user.prompts()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(f.user.block)
	wg.Wait()
	if n := len(f.user.prompts()); n != 1 {
		t.Errorf("%d prompts for 3 identical concurrent requests, want 1", n)
	}
	if ran.Load() != 3 {
		t.Errorf("%d of 3 ran", ran.Load())
	}
}

// budgetRecorder is the real sandbox runner, noting the timeout each attempt
// was given.
type budgetRecorder struct {
	Runner
	mu       sync.Mutex
	timeouts []time.Duration
}

func (r *budgetRecorder) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	r.mu.Lock()
	r.timeouts = append(r.timeouts, spec.Timeout)
	r.mu.Unlock()
	return r.Runner.Run(ctx, spec)
}

func TestOrchestratorWaitingForTheUserDoesNotCountAgainstTheTimeout(t *testing.T) {
	f := newOrch(t, Untrusted, Approved)
	rec := &budgetRecorder{Runner: f.o.Runner}
	f.o.Runner = rec
	f.user.block = make(chan struct{})
	go func() { time.Sleep(time.Second); close(f.user.block) }()
	// The whole budget reaches the run after a second at the dialog: an
	// exact check, so a slow sandbox start on a loaded machine cannot
	// make it fail, and the generous timeout leaves the run room.
	const timeout = 20 * time.Second
	res, err := f.o.Exec(context.Background(), ExecRequest{
		CommandRequest: CommandRequest{Argv: []string{"sleep", "0.1"}, Cwd: f.ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}}},
		Timeout:        timeout,
	})
	if err != nil || !res.Ran || res.Result.TimedOut || res.Result.ExitCode != 0 {
		t.Errorf("outcome %+v err %v", res, err)
	}
	if len(f.user.prompts()) != 1 || len(rec.timeouts) != 1 || rec.timeouts[0] != timeout {
		t.Errorf("after %d prompts the run was given %v of the %v timeout: the wait for the user was charged", len(f.user.prompts()), rec.timeouts, timeout)
	}
	// The timeout still applies to the run itself.
	f = newOrch(t, OnRequest)
	res, err = f.o.Exec(context.Background(), ExecRequest{
		CommandRequest: CommandRequest{Argv: []string{"sleep", "5"}, Cwd: f.ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}}},
		Timeout:        300 * time.Millisecond,
	})
	if err != nil || !res.Result.TimedOut {
		t.Errorf("run over its timeout: %+v %v", res, err)
	}
}

func TestOrchestratorFailsClosed(t *testing.T) {
	f := newOrch(t, Untrusted)
	f.o.Prompter = nil
	res, _ := f.exec(t, WorkspaceWrite, "touch", "x")
	if res.Ran || !strings.Contains(res.Refused, "nobody could be asked") {
		t.Errorf("no prompter: %+v", res)
	}
	f = newOrch(t, Untrusted)
	f.user.err = errors.New("dialog dismissed")
	res, _ = f.exec(t, WorkspaceWrite, "touch", "x")
	if res.Ran || !strings.Contains(res.Refused, "dialog dismissed") {
		t.Errorf("prompter error: %+v", res)
	}
	// A prompter may not pick an action it was not offered.
	f = newOrch(t, OnRequest, ApprovedForSession)
	res, _ = f.exec(t, WorkspaceWrite, "git", "reset", "--hard")
	if res.Ran {
		t.Errorf("session approval of a high-risk command was accepted: %+v", res)
	}
	if p := f.user.prompts(); len(p) != 1 || p[0].AllowSession || p[0].Risk.Level != risk.High {
		t.Errorf("high-risk prompt %+v", p)
	}
}

func TestApprovePatch(t *testing.T) {
	f := newOrch(t, OnRequest, Approved, Approved)
	sb := Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{f.ws}}
	in := filepath.Join(f.ws, "main.go")
	outside := filepath.Join(filepath.Dir(f.ws), "elsewhere", "x.txt")
	hook := filepath.Join(f.ws, ".git", "hooks", "pre-commit")
	ctx := context.Background()

	res, err := f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: in, Change: PatchUpdate}}, Cwd: f.ws, Sandbox: sb})
	if err != nil || !res.Approved || res.Asked {
		t.Fatalf("inside the workspace: %+v %v", res, err)
	}
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: in, Change: PatchUpdate}, {Path: outside, Change: PatchAdd}}, Cwd: f.ws, Sandbox: sb})
	if !res.Approved || !res.Asked || len(res.Evaluation.Reasons) != 1 || res.Evaluation.Reasons[0].Kind != OutsideWritableRoots {
		t.Fatalf("outside: %+v", res.Evaluation)
	}
	if p := f.user.prompts()[0]; p.Kind != PromptPatch || p.AllowSession || !strings.Contains(p.Message(), "elsewhere") {
		t.Errorf("high-risk patch prompt %+v", p)
	}
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: hook, Change: PatchAdd}}, Cwd: f.ws, Sandbox: sb})
	if !res.Asked || res.Evaluation.Reasons[0].Kind != ProtectedPath {
		t.Errorf("protected: %+v", res.Evaluation)
	}

	// Per-file session approval under untrusted.
	f = newOrch(t, Untrusted, ApprovedForSession, Approved)
	a, b := filepath.Join(f.ws, "a.go"), filepath.Join(f.ws, "b.go")
	sb = Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{f.ws}}
	f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: a, Change: PatchUpdate}}, Cwd: f.ws, Sandbox: sb})
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: a, Change: PatchUpdate}}, Cwd: f.ws, Sandbox: sb})
	if res.Asked || !res.Approved {
		t.Errorf("remembered file asked again: %+v", res)
	}
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: a, Change: PatchUpdate}, {Path: b, Change: PatchDelete}}, Cwd: f.ws, Sandbox: sb})
	if !res.Asked {
		t.Error("a patch with an unremembered file must ask")
	}

	// never: what would need the user is refused.
	f = newOrch(t, Never)
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Files: []PatchFile{{Path: "/etc/hosts", Change: PatchUpdate}}, Cwd: f.ws, Sandbox: sb})
	if res.Approved || res.Asked || !strings.Contains(res.Refused, "never") {
		t.Errorf("never: %+v", res)
	}
	res, _ = f.o.ApprovePatch(ctx, PatchRequest{Cwd: f.ws, Sandbox: sb})
	if res.Approved {
		t.Error("an empty patch was approved")
	}
}
