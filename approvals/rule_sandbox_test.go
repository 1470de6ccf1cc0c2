package approvals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// TestAllowRuleRunsInTheSandbox is the attack: with an allow rule
// for `make lint`, a sandboxed run rewrites the Makefile, then `make lint`
// runs the new recipe. The rule spares the dialog but not the sandbox: the
// recipe cannot write outside the writable roots. The twin: the same rule
// still runs `make lint` unasked.
func TestAllowRuleRunsInTheSandbox(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	f := newOrch(t, Untrusted)
	os.MkdirAll(f.rules, 0o755)
	writeRules(t, f.rules, "t.rules", `prefix_rule(pattern=["make", "lint"], decision="allow")`+"\n")
	if err := f.o.Rules.Reload(); err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp(outsideTempDirs(t), ".rule-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	marker := filepath.Join(outside, "pwned")
	recipe := "lint:\n\ttouch " + marker + "; echo linted\n"
	// The "earlier sandboxed run" that rewrote the Makefile.
	os.WriteFile(filepath.Join(f.ws, "Makefile"), []byte(recipe), 0o644)

	res, out := f.exec(t, WorkspaceWrite, "make", "lint")
	if res.Asked || !res.Ran {
		t.Fatalf("the rule must spare the dialog: asked %v ran %v (%s)", res.Asked, res.Ran, res.Evaluation.Reason)
	}
	if res.Escalated || res.Evaluation.BypassSandbox {
		t.Errorf("an allow rule took `make lint` out of the sandbox: %+v", res.Evaluation)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the rewritten recipe wrote outside the writable roots; output %q", out)
	}
	if !strings.Contains(out, "linted") {
		t.Errorf("twin: `make lint` did not run its recipe in the sandbox: %q", out)
	}
}

// TestRuleFromAWritableRootIsNotApplied: a rules file a sandboxed command
// can rewrite gives no command a pass: its allow rules are reported, not
// applied. A rules file in a protected part of the root (.warden) is.
func TestRuleFromAWritableRootIsNotApplied(t *testing.T) {
	ws := t.TempDir()
	loose := writeRules(t, filepath.Join(ws, "team"), "t.rules", `prefix_rule(pattern=["make"], decision="allow")`+"\n")
	held := writeRules(t, filepath.Join(ws, ".warden", "rules"), "t.rules", `prefix_rule(pattern=["cargo"], decision="allow")`+"\n")
	ruleSet, err := rules.LoadRuleFiles([]string{loose, held})
	if err != nil {
		t.Fatal(err)
	}
	ev := &Evaluator{Policy: Policy{Ask: Untrusted}, Rules: ruleSet}
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}
	e := ev.Evaluate(CommandRequest{Argv: []string{"make"}, Cwd: ws, Sandbox: sb})
	if e.Decision != rules.Prompt || !strings.Contains(e.Reason, "allow rule not applied") || !strings.Contains(e.Reason, "lies in the writable root "+ws) {
		t.Errorf("attack: a rule from %s: %s (%s)", loose, e.Decision, e.Reason)
	}
	if len(e.MatchedRules) != 1 {
		t.Errorf("the rule set aside is not reported: %+v", e.MatchedRules)
	}
	if e := ev.Evaluate(CommandRequest{Argv: []string{"cargo", "test"}, Cwd: ws, Sandbox: sb}); e.Decision != rules.Allow {
		t.Errorf("twin: a rule from the held .warden: %s (%s)", e.Decision, e.Reason)
	}
	// Outside every writable root the loose file is the user's own.
	sb.WritableRoots = []string{filepath.Join(ws, "elsewhere")}
	if e := ev.Evaluate(CommandRequest{Argv: []string{"make"}, Cwd: ws, Sandbox: sb}); e.Decision != rules.Allow {
		t.Errorf("twin: a rule from outside the roots: %s (%s)", e.Decision, e.Reason)
	}
}

// TestAlwaysAllowOfferedOnlyWhenTheRuleWillApply: "Always allow" saves a
// rule; it is offered only when that rule would be applied next time.
func TestAlwaysAllowOfferedOnlyWhenTheRuleWillApply(t *testing.T) {
	bin := hostBin(t, "cat", "make")
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "stash"), []byte("#!/bin/sh\n"), 0o755)
	granted := hostBin(t)
	rulesDir := filepath.Join(outsideTempDirs(t), ".rules-"+filepath.Base(ws))
	t.Cleanup(func() { os.RemoveAll(rulesDir) })
	ev := &Evaluator{Policy: Policy{Ask: OnRequest}, RunEnv: hostEnv(bin), RulesDir: rulesDir}
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}
	ask := func(argv ...string) *Evaluation {
		return ev.Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: sb, PrefixRule: argv, Grant: grantOf(granted)})
	}

	// Attack: a program in the workspace with a write grant. The saved rule
	// would be set aside (the sandbox could rewrite ./stash), so it is not
	// offered, and the dialog says why.
	e := ask("./stash", "push")
	if e.Decision != rules.Prompt || e.Amendment != nil || !strings.Contains(e.Reason, `"Always allow" is not offered`) || !strings.Contains(e.Reason, "relative path") {
		t.Errorf("./stash with a grant: %s amendment %q (%s)", e.Decision, e.Amendment, e.Reason)
	}
	// Twin: a program from outside the roots with the same grant.
	if e := ask("make", "dist"); e.Decision != rules.Prompt || len(e.Amendment) == 0 {
		t.Errorf("make dist with a grant: %s amendment %q (%s)", e.Decision, e.Amendment, e.Reason)
	}
	// With no sandbox at all, a saved rule would run it unsandboxed.
	ev.Policy.Ask = Untrusted
	e = ev.Evaluate(CommandRequest{Argv: []string{"make", "dist"}, Cwd: ws, Sandbox: Sandbox{Mode: DangerFullAccess, Workspace: []string{ws}}, PrefixRule: []string{"make", "dist"}})
	if e.Decision != rules.Prompt || e.Amendment != nil || !strings.Contains(e.Reason, "danger-full-access") {
		t.Errorf("danger-full-access: %s amendment %q (%s)", e.Decision, e.Amendment, e.Reason)
	}
	ev.Policy.Ask = OnRequest
	// The rules directory itself inside a writable root: nothing saved
	// there would be applied.
	ev.RulesDir = filepath.Join(ws, "rules")
	if e := ask("make", "dist"); e.Amendment != nil || !strings.Contains(e.Reason, "lies in the writable root") {
		t.Errorf("rules directory in the workspace: amendment %q (%s)", e.Amendment, e.Reason)
	}
}

// grantOf is a request's write grant to dir.
func grantOf(dir string) sandbox.Grant { return sandbox.Grant{Write: []string{dir}} }

// TestSessionApprovalOfAnUnsandboxedRunLapses: "Allow for session" of a
// run outside the sandbox lapses at the next patch or sandboxed run with
// write access (either may change what it reads); the next run asks again
// and says why. A sandboxed session approval does not lapse.
func TestSessionApprovalOfAnUnsandboxedRunLapses(t *testing.T) {
	f := newOrch(t, OnRequest, ApprovedForSession, ApprovedForSession, ApprovedForSession)
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}
	escalated := func() *ExecOutcome {
		t.Helper()
		res, err := f.o.Exec(context.Background(), ExecRequest{
			CommandRequest: CommandRequest{Argv: []string{"curl", "-s", "--max-time", "2", "http://127.0.0.1:9/"}, Cwd: f.ws, Sandbox: sb, RequestEscalation: true, Justification: "j"},
			Timeout:        30 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := escalated(); !res.Asked || !res.Escalated {
		t.Fatalf("first escalated run: asked %v escalated %v (%s)", res.Asked, res.Escalated, res.Evaluation.Reason)
	}
	if res := escalated(); res.Asked || !res.Escalated {
		t.Fatalf("twin: the session approval holds while nothing changed: asked %v", res.Asked)
	}
	// A sandboxed run that may write.
	if res, _ := f.exec(t, WorkspaceWrite, "touch", "x"); !res.Ran {
		t.Fatalf("sandboxed run: %+v", res)
	}
	res := escalated()
	if !res.Asked {
		t.Fatal("attack: the unsandboxed session approval outlived a sandboxed run with write access")
	}
	last := f.user.asked[len(f.user.asked)-1]
	if !strings.Contains(last.Reason, "lapsed after the sandboxed run of `touch x`") {
		t.Errorf("the dialog does not say why it asks again: %q", last.Reason)
	}
	// A patch lapses it too.
	if _, err := f.o.ApprovePatch(context.Background(), PatchRequest{Files: []PatchFile{{Path: filepath.Join(f.ws, "Makefile")}}, Cwd: f.ws, Sandbox: sb}); err != nil {
		t.Fatal(err)
	}
	f.user.answers = append(f.user.answers, ApprovedForSession)
	if res := escalated(); !res.Asked {
		t.Error("attack: the unsandboxed session approval outlived a patch")
	}
	if last := f.user.asked[len(f.user.asked)-1]; !strings.Contains(last.Reason, "lapsed after the patch to") {
		t.Errorf("the dialog does not name the patch: %q", last.Reason)
	}
}

// TestNetworkAllowRuleFromAWritableRoot: a network_rule allow in a rules
// file the run could rewrite lets no connection through unasked: the run's
// proxy asks (here nobody can answer, so it is refused) and says why. The
// twin: the same rule from outside the writable roots allows.
func TestNetworkAllowRuleFromAWritableRoot(t *testing.T) {
	ws := t.TempDir()
	loose := writeRules(t, filepath.Join(ws, "team"), "net.rules", `network_rule(host="pypi.org", decision="allow")`+"\n")
	book, err := rules.NewRuleBook(nil, []string{loose})
	if err != nil {
		t.Fatal(err)
	}
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Rules: book})
	d.RegisterRun("r1", func() {})
	d.SetRunSandbox("r1", Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}})
	if v := d.Decide(context.Background(), netReq("pypi.org", 443, netproxy.HTTPS, "r1")); v.Allow {
		t.Errorf("attack: a network allow rule from the workspace let the connection through: %s", v.Reason)
	}
	ruleSet, _ := book.Current()
	ev := EvaluateNetworkIn(ruleSet, Policy{Ask: OnRequest}, dst("pypi.org", 443, netproxy.HTTPS), Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{ws}})
	if ev.Decision != rules.Prompt || !strings.Contains(ev.Reason, "network_rule at "+loose) || !strings.Contains(ev.Reason, "lies in the writable root "+ws) {
		t.Errorf("the dialog's reason does not say why the rule was set aside: %s (%s)", ev.Decision, ev.Reason)
	}
	d.RegisterRun("r2", func() {})
	d.SetRunSandbox("r2", Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{filepath.Join(ws, "src")}})
	if v := d.Decide(context.Background(), netReq("pypi.org", 443, netproxy.HTTPS, "r2")); !v.Allow {
		t.Errorf("twin: the rule from outside the run's roots: %s", v.Reason)
	}
}
