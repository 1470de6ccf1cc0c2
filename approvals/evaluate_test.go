package approvals

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/approvals/safe"
)

func TestEvaluatePolicies(t *testing.T) {
	ws, home := riskWorkspace(t, 20)
	_ = home
	bin := hostBin(t, "bash", "cargo", "git", "make", "ls")
	rulesDir := t.TempDir()
	writeRules(t, rulesDir, "r.rules", `
prefix_rule(pattern=["make", "deploy"], decision="forbidden", justification="deploys go through CI")
prefix_rule(pattern=["npm", "publish"], decision="prompt", justification="publishing is public")
prefix_rule(pattern=["cargo", "test"], decision="allow")
prefix_rule(pattern=["git", "commit"], decision="allow")
prefix_rule(pattern=["git", "push"], decision="allow")
`)
	ruleSet, err := rules.LoadRules([]rules.RuleSource{{Dir: rulesDir}})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		decision  rules.Decision
		bypass    bool
		amendment []string
		reason    string // substring
	}
	cases := []struct {
		name     string
		policy   Policy
		argv     []string
		escalate bool
		prefix   []string
		sandbox  SandboxMode
		want     want
	}{
		// Known-safe commands run under every policy.
		{"safe untrusted", Policy{Ask: Untrusted}, []string{"ls"}, false, nil, "", want{rules.Allow, false, nil, "known to be safe"}},
		{"safe on-request", Policy{Ask: OnRequest}, []string{"cat", "x"}, false, nil, "", want{rules.Allow, false, nil, "known to be safe"}},
		{"safe never", Policy{Ask: Never}, []string{"pwd"}, false, nil, "", want{rules.Allow, false, nil, ""}},
		{"safe script untrusted", Policy{Ask: Untrusted}, []string{"bash", "-lc", "ls && wc -l x"}, false, nil, "", want{rules.Allow, false, nil, "known to be safe"}},
		// Untrusted asks for everything else, offering the first command as amendment.
		{"untrusted make", Policy{Ask: Untrusted}, []string{"make", "all"}, false, nil, "", want{rules.Prompt, false, []string{"make", "all"}, "not known to be safe"}},
		// git status runs hardened (the repository's programs disabled), so it is known-safe.
		{"untrusted git status", Policy{Ask: Untrusted}, []string{"git", "status"}, false, nil, "", want{rules.Allow, false, nil, "runs as `git --no-pager"}},
		{"untrusted git status with its own -c", Policy{Ask: Untrusted}, []string{"git", "-c", "core.pager=less", "status"}, false, nil, "", want{rules.Prompt, false, []string{"git", "-c", "core.pager=less", "status"}, ""}},
		{"untrusted script amendment is first unmatched", Policy{Ask: Untrusted}, []string{"bash", "-lc", "ls && go build ./... && go test ./..."}, false, nil, "", want{rules.Prompt, false, []string{"go", "build", "./..."}, ""}},
		{"untrusted model prefix used", Policy{Ask: Untrusted}, []string{"go", "test", "./pkg"}, false, []string{"go", "test"}, "", want{rules.Prompt, false, []string{"go", "test"}, ""}},
		{"untrusted model prefix not covering", Policy{Ask: Untrusted}, []string{"go", "test", "./pkg"}, false, []string{"go", "vet"}, "", want{rules.Prompt, false, []string{"go", "test", "./pkg"}, ""}},
		{"banned model prefix python", Policy{Ask: Untrusted}, []string{"python3", "x.py"}, false, []string{"python3"}, "", want{rules.Prompt, false, []string{"python3", "x.py"}, ""}},
		{"no amendment for bare interpreter", Policy{Ask: Untrusted}, []string{"python3"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"no amendment for one-liner", Policy{Ask: Untrusted}, []string{"node", "-e"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"no amendment for bare git", Policy{Ask: Untrusted}, []string{"git"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"no amendment for env", Policy{Ask: Untrusted}, []string{"env", "A=1", "make"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"no amendment for bash -lc prefix", Policy{Ask: Untrusted}, []string{"bash", "-lc", "$X"}, false, []string{"bash", "-lc"}, "", want{rules.Prompt, false, nil, ""}},
		{"no amendment for sudo", Policy{Ask: Untrusted}, []string{"sudo", "ls"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		// Dangerous: prompt, never an amendment; forbidden under never.
		{"dangerous on-request", Policy{Ask: OnRequest}, []string{"rm", "-f", "/srv/one.txt"}, false, nil, "", want{rules.Prompt, false, nil, "may destroy data"}},
		// A deletion the sandbox confines (inside the writable roots, small, no repository data) runs sandboxed.
		{"confined delete on-request", Policy{Ask: OnRequest}, []string{"rm", "-f", "one.txt"}, false, nil, "", want{rules.Allow, false, nil, "runs in the sandbox"}},
		{"confined delete never", Policy{Ask: Never}, []string{"rm", "-rf", "build"}, false, nil, "", want{rules.Allow, false, nil, "runs in the sandbox"}},
		{"confined delete asks to escalate", Policy{Ask: OnRequest}, []string{"rm", "-rf", "build"}, true, nil, "", want{rules.Prompt, false, nil, "may destroy data"}},
		{"confined delete without a sandbox", Policy{Ask: OnRequest}, []string{"rm", "-rf", "build"}, false, nil, DangerFullAccess, want{rules.Prompt, false, nil, "may destroy data"}},
		{"delete of repository data", Policy{Ask: OnRequest}, []string{"rm", "-rf", ".git"}, false, nil, "", want{rules.Prompt, false, nil, "repository data"}},
		{"delete of the whole workspace", Policy{Ask: OnRequest}, []string{"rm", "-rf", "*"}, false, nil, "", want{rules.Prompt, false, nil, "eletes everything in"}},
		{"dangerous untrusted", Policy{Ask: Untrusted}, []string{"rm", "-rf", "build"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"dangerous never", Policy{Ask: Never}, []string{"rm", "-rf", "/srv/build"}, false, nil, "", want{rules.Forbidden, false, nil, "never"}},
		{"dangerous in script", Policy{Ask: OnRequest}, []string{"bash", "-lc", "make && rm -rf /srv/build"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"dangerous xargs", Policy{Ask: OnRequest}, []string{"bash", "-lc", "ls | xargs rm -rf"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"dangerous on-failure", Policy{Ask: OnFailure}, []string{"rm", "-f", "/srv/x"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		// On-request: the sandbox protects; ask only to leave it or for high risk.
		{"on-request make", Policy{Ask: OnRequest}, []string{"make"}, false, nil, "", want{rules.Allow, false, nil, "runs in the sandbox"}},
		// Leaving the sandbox is never offered "Always allow": the saved rule
		// would run it in the sandbox, not as approved.
		{"on-request escalation medium risk", Policy{Ask: OnRequest}, []string{"curl", "https://example.com"}, true, nil, "", want{rules.Prompt, false, nil, "outside the sandbox"}},
		{"on-request escalation low risk runs sandboxed", Policy{Ask: OnRequest}, []string{"make", "all"}, true, nil, "", want{rules.Allow, false, nil, "escalation not needed"}},
		{"on-request high risk asks", Policy{Ask: OnRequest}, []string{"git", "reset", "--hard"}, false, nil, "", want{rules.Prompt, false, nil, "high risk"}},
		{"on-request high risk no amendment", Policy{Ask: OnRequest}, []string{"bash", "-lc", "echo x >> ~/.profile"}, false, nil, "", want{rules.Prompt, false, nil, "In the sandbox this write is refused; outside it, it writes outside the workspace"}},
		{"on-request danger-full-access", Policy{Ask: OnRequest}, []string{"make"}, true, nil, DangerFullAccess, want{rules.Allow, false, nil, "no sandbox"}},
		{"on-request unparseable", Policy{Ask: OnRequest}, []string{"bash", "-lc", "if ; then"}, false, nil, "", want{rules.Prompt, false, nil, "could not analyse"}},
		// Never: asks nobody.
		{"never make", Policy{Ask: Never}, []string{"make"}, false, nil, "", want{rules.Allow, false, nil, ""}},
		{"never escalation runs sandboxed", Policy{Ask: Never}, []string{"make"}, true, nil, "", want{rules.Allow, false, nil, ""}},
		{"never medium-risk escalation runs sandboxed", Policy{Ask: Never}, []string{"curl", "https://example.com"}, true, nil, "", want{rules.Allow, false, nil, "does not ask before running, so it runs sandboxed"}},
		{"on-failure escalation runs sandboxed first", Policy{Ask: OnFailure}, []string{"npm", "install"}, true, nil, "", want{rules.Allow, false, nil, "runs sandboxed"}},
		{"never prompt rule is forbidden", Policy{Ask: Never}, []string{"npm", "publish"}, false, nil, "", want{rules.Forbidden, false, nil, "approval policy is never"}},
		{"never unparseable is forbidden", Policy{Ask: Never}, []string{"bash", "-lc", "echo 'x"}, false, nil, "", want{rules.Forbidden, false, nil, "could not analyse"}},
		// On-failure: runs sandboxed; retries are asked later.
		{"on-failure make", Policy{Ask: OnFailure}, []string{"make"}, false, nil, "", want{rules.Allow, false, nil, ""}},
		// Rules.
		{"forbidden rule", Policy{Ask: OnRequest}, []string{"make", "deploy", "prod"}, false, nil, "", want{rules.Forbidden, false, nil, "deploys go through CI"}},
		{"forbidden rule in script", Policy{Ask: OnRequest}, []string{"bash", "-lc", "ls && make deploy"}, false, nil, "", want{rules.Forbidden, false, nil, "rejected"}},
		{"forbidden rule never-policy", Policy{Ask: Never}, []string{"make", "deploy"}, false, nil, "", want{rules.Forbidden, false, nil, ""}},
		{"prompt rule", Policy{Ask: OnRequest}, []string{"npm", "publish"}, false, nil, "", want{rules.Prompt, false, nil, "publishing is public"}},
		{"prompt rule no amendment", Policy{Ask: Untrusted}, []string{"npm", "publish", "--tag", "x"}, false, nil, "", want{rules.Prompt, false, nil, "requires approval"}},
		// An allow rule runs the command without asking, in the sandbox.
		{"allow rule keeps the sandbox", Policy{Ask: Untrusted}, []string{"cargo", "test"}, false, nil, "", want{rules.Allow, false, nil, "allowed by rule"}},
		{"allow rules for every command keep the sandbox", Policy{Ask: Untrusted}, []string{"bash", "-lc", "cargo test && git commit -m x"}, false, nil, "", want{rules.Allow, false, nil, "in the sandbox"}},
		{"allow rule and safe command", Policy{Ask: Untrusted}, []string{"bash", "-lc", "cargo test && ls"}, false, nil, "", want{rules.Allow, false, nil, ""}},
		// Leaving the sandbox takes a dialog, whatever the rules say; no
		// "Always allow" is offered for it (a rule would run it sandboxed).
		{"allow rule asking to leave the sandbox asks", Policy{Ask: OnRequest}, []string{"git", "push"}, true, []string{"git", "push"}, "", want{rules.Prompt, false, nil, "asks to run outside it"}},
		{"allow rule asking to leave, low risk, runs sandboxed", Policy{Ask: OnRequest}, []string{"cargo", "test"}, true, nil, "", want{rules.Allow, false, nil, "escalation not needed"}},
		{"allow rule asking to leave under never runs sandboxed", Policy{Ask: Never}, []string{"git", "push"}, true, nil, "", want{rules.Allow, false, nil, "runs sandboxed"}},
		{"allow rule then unmatched asks for the rest", Policy{Ask: Untrusted}, []string{"bash", "-lc", "cargo test && make"}, false, nil, "", want{rules.Prompt, false, []string{"make"}, ""}},
		{"allow rule but high risk still asks", Policy{Ask: OnRequest}, []string{"git", "push", "--force"}, false, nil, "", want{rules.Prompt, false, nil, "Rewrites remote history"}},
		{"allow rule plain push", Policy{Ask: OnRequest}, []string{"git", "push"}, false, nil, "", want{rules.Allow, false, nil, "in the sandbox"}},
		// Granular.
		{"granular rejects rule prompts", Policy{Ask: Granular, Reject: RejectCategories{Rules: true}}, []string{"npm", "publish"}, false, nil, "", want{rules.Forbidden, false, nil, "granular"}},
		{"granular keeps rule prompts", Policy{Ask: Granular}, []string{"npm", "publish"}, false, nil, "", want{rules.Prompt, false, nil, ""}},
		{"granular rejects escalation", Policy{Ask: Granular, Reject: RejectCategories{SandboxEscalation: true}}, []string{"curl", "https://example.com"}, true, nil, "", want{rules.Forbidden, false, nil, "granular"}},
		{"granular escalation asked", Policy{Ask: Granular}, []string{"curl", "https://example.com"}, true, nil, "", want{rules.Prompt, false, nil, ""}},
		{"granular plain runs", Policy{Ask: Granular, Reject: RejectCategories{SandboxEscalation: true, Rules: true}}, []string{"make"}, false, nil, "", want{rules.Allow, false, nil, ""}},
	}
	for _, c := range cases {
		mode := c.sandbox
		if mode == "" {
			mode = WorkspaceWrite
		}
		ev := &Evaluator{Policy: c.policy, Rules: ruleSet, RunEnv: hostEnv(bin)}
		e := ev.Evaluate(CommandRequest{Argv: c.argv, Cwd: ws, Sandbox: Sandbox{Mode: mode}, RequestEscalation: c.escalate, PrefixRule: c.prefix})
		if e.Decision != c.want.decision {
			t.Errorf("%s: decision %s, want %s (reason %q)", c.name, e.Decision, c.want.decision, e.Reason)
			continue
		}
		if e.BypassSandbox != c.want.bypass {
			t.Errorf("%s: bypass_sandbox %v, want %v", c.name, e.BypassSandbox, c.want.bypass)
		}
		if !reflect.DeepEqual(e.Amendment, c.want.amendment) {
			t.Errorf("%s: amendment %q, want %q", c.name, e.Amendment, c.want.amendment)
		}
		if !strings.Contains(e.Reason, c.want.reason) {
			t.Errorf("%s: reason %q lacks %q", c.name, e.Reason, c.want.reason)
		}
	}
}

func TestPromptActions(t *testing.T) {
	titles := func(p PromptRequest) []string {
		var out []string
		for _, a := range p.Actions() {
			out = append(out, a.Title)
		}
		return out
	}
	p := PromptRequest{AllowSession: true, Amendment: []string{"go", "test"}, Risk: risk.Risk{Level: risk.Medium}}
	if got, want := titles(p), []string{"Allow once", "Allow for session", "Always allow `go test`", "Deny", "Deny and stop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("titles %q, want %q", got, want)
	}
	p.Amendment = nil
	if got, want := titles(p), []string{"Allow once", "Allow for session", "Deny", "Deny and stop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("no amendment: titles %q", got)
	}
	p.Amendment, p.Risk.Level = []string{"x"}, risk.High
	if got, want := titles(p), []string{"Deny", "Allow once", "Deny and stop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("high risk: titles %q, want %q", got, want)
	}
	if p.DecisionFor("Allow for session") != Denied || p.DecisionFor("") != Denied || p.DecisionFor("Deny and stop") != Abort {
		t.Error("DecisionFor must map unknown or unoffered titles to Denied")
	}
	msg := PromptRequest{Kind: PromptCommand, Command: "rm -rf build", Cwd: "/w", Justification: "clean", Sandboxed: true,
		Sandbox: Sandbox{Mode: WorkspaceWrite}, Risk: risk.Risk{Level: risk.High, Summary: "Deletes", Facts: []string{"deletes 3 files (1 KB) under build/"}}}.Message()
	for _, want := range []string{"rm -rf build", "/w", "clean", "sandboxed (workspace-write", "high", "deletes 3 files"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	msg = PromptRequest{Kind: PromptPatch, Files: []string{".git/config"}, Cwd: "/w", Risk: risk.Risk{Level: risk.Medium, Summary: "protected"}}.Message()
	if !strings.Contains(msg, ".git/config") || !strings.Contains(msg, "Warden writes these files itself") || strings.Contains(msg, "NOT sandboxed") {
		t.Errorf("a patch dialog must say no command runs:\n%s", msg)
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy("granular", []string{"rules", "patches"})
	if err != nil || p.Ask != Granular || !p.Reject.Rules || !p.Reject.Patches || p.Reject.SandboxEscalation {
		t.Errorf("ParsePolicy = %+v, %v", p, err)
	}
	if _, err := ParsePolicy("sometimes", nil); err == nil || !strings.Contains(err.Error(), "on-request") {
		t.Errorf("bad policy: %v", err)
	}
	if _, err := ParsePolicy("granular", []string{"everything"}); err == nil {
		t.Error("bad granular category accepted")
	}
	for _, s := range []string{"untrusted", "on-failure", "on-request", "never", "granular"} {
		a, err := ParseAskForApproval(s)
		if err != nil || a.String() != s {
			t.Errorf("round trip %q: %v %v", s, a, err)
		}
	}
}

// An empty or multi-line token cannot be saved as a rule, so no "Always
// allow" is offered for it (it would fail after the user chose it); the
// twin without it is offered.
func TestAmendmentOnlyForWritableTokens(t *testing.T) {
	seg := func(argv ...string) []command.Segment { return []command.Segment{{Argv: argv, Literal: true}} }
	if a := amendment(nil, seg("curl", "--noproxy", "", "http://x")); a != nil {
		t.Errorf("empty token: amendment %q", a)
	}
	if a := amendment(nil, seg("printf", "a\nb")); a != nil {
		t.Errorf("newline token: amendment %q", a)
	}
	if a := amendment(nil, seg("curl", "--noproxy", "none", "http://x")); len(a) == 0 {
		t.Error("twin: no amendment offered")
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	huge := strings.Repeat("echo hi; ", (1<<20)/9)
	cases := map[string][]string{
		"non-UTF-8 argv":    {"ls", "\xff\xfe"},
		"1 MB command line": {"bash", "-lc", huge},
		"parser rejects":    {"bash", "-lc", "echo 'unterminated"},
		"empty":             {},
		"1 MB plain argv":   {"echo", huge},
	}
	for name, argv := range cases {
		a := command.Analyze(argv)
		if len(a.Problems) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
		if safe.KnownSafe(a) {
			t.Errorf("%s: treated as known-safe", name)
		}
		ev := (&Evaluator{Policy: Policy{Ask: OnRequest}}).Evaluate(CommandRequest{Argv: argv, Cwd: t.TempDir(), Sandbox: Sandbox{Mode: WorkspaceWrite}})
		if ev.Decision != rules.Prompt {
			t.Errorf("%s: decision %s, want prompt (the safe default); reason %q", name, ev.Decision, ev.Reason)
		}
		if ev.Reason == "" || len(ev.Reason) > 2000 {
			t.Errorf("%s: reason missing or too long for a dialog (%d bytes)", name, len(ev.Reason))
		}
	}
}

// TestUntrustedWithoutASandboxAsksEveryCommand: where Warden has no OS
// sandbox (Windows), untrusted asks before a known-safe command too and
// says why; the twins: the same command runs unasked under untrusted where
// a sandbox exists, and under on-request either way.
func TestUntrustedWithoutASandboxAsksEveryCommand(t *testing.T) {
	ws := t.TempDir()
	req := CommandRequest{Argv: []string{"ls"}, Cwd: ws, Sandbox: Sandbox{Mode: DangerFullAccess}}
	evaluate := func(ask AskForApproval, unconfined bool) *Evaluation {
		old := unconfinedPlatform
		unconfinedPlatform = unconfined
		defer func() { unconfinedPlatform = old }()
		return (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(req)
	}
	e := evaluate(Untrusted, true)
	if e.Decision != rules.Prompt || !strings.Contains(e.Reason, "no sandbox on this system") {
		t.Fatalf("untrusted without a sandbox: %s (%s), want prompt naming the missing sandbox", e.Decision, e.Reason)
	}
	if e := evaluate(Untrusted, false); e.Decision != rules.Allow {
		t.Errorf("untrusted with a sandbox: %s (%s), want allow for a known-safe command", e.Decision, e.Reason)
	}
	if e := evaluate(OnRequest, true); e.Decision != rules.Allow {
		t.Errorf("on-request without a sandbox: %s (%s), want allow", e.Decision, e.Reason)
	}
}

// TestNoAmendmentForAShellBuiltin: "Always allow `exit 3`" would remember
// nothing a later command means; a builtin is never offered as a prefix.
// The twin: the program in the same script is.
func TestNoAmendmentForAShellBuiltin(t *testing.T) {
	ws := t.TempDir()
	ev := &Evaluator{Policy: Policy{Ask: Untrusted}}
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}
	for _, script := range []string{"echo no; exit 3", "export X=1", "cd sub && umask 077", "kill 4242"} {
		e := ev.Evaluate(CommandRequest{Argv: []string{"bash", "-lc", script}, Cwd: ws, Sandbox: sb})
		if e.Decision != rules.Prompt || e.Amendment != nil {
			t.Errorf("%q: decision %s, amendment %q; want a prompt without one", script, e.Decision, e.Amendment)
		}
	}
	e := ev.Evaluate(CommandRequest{Argv: []string{"bash", "-lc", "echo no; make build"}, Cwd: ws, Sandbox: sb})
	if strings.Join(e.Amendment, " ") != "make build" {
		t.Errorf("make build: amendment %q, want make build", e.Amendment)
	}
}
