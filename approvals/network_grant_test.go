package approvals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// netRunner stands in for the sandbox and its proxy: each sandboxed run
// registers its granted hosts with the decider, as NetworkProxy.forRun
// does, and "connects" to dests through the decider; a refused connection
// makes the command fail, as curl does. An unsandboxed run reaches all.
type netRunner struct {
	d     *NetworkDecider
	dests []netproxy.Destination
	// failExit is the exit code when a connection was refused (0: the
	// command succeeds anyway, a fallback mirror).
	failExit int

	mu    sync.Mutex
	specs []RunSpec
	seq   int
}

func (r *netRunner) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	r.mu.Lock()
	r.specs = append(r.specs, spec)
	r.seq++
	id := fmt.Sprintf("fake-run-%d", r.seq)
	r.mu.Unlock()
	if spec.Unsandboxed {
		return RunResult{}, nil
	}
	revoke := r.d.GrantHosts(id, spec.Grant.Network)
	defer revoke()
	var res RunResult
	for _, dst := range r.dests {
		v := r.d.Decide(ctx, netproxy.Request{Dest: dst, Origin: netproxy.Origin{RunID: id, Command: spec.Argv, Workdir: spec.Cwd}})
		if !v.Allow {
			res.ExitCode = r.failExit
			res.NetworkNotes = append(res.NetworkNotes, v.Reason)
		}
	}
	res.RefusedHosts = r.d.RetryableHosts(id)
	return res, nil
}

func (r *netRunner) runs() []RunSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.specs)
}

// netGrantFixture is an orchestrator and a network decider sharing one
// user, session store, rule book and audit log, as exec and serve build
// them.
type netGrantFixture struct {
	ws, rules, state string
	user             *scriptedUser
	o                *Orchestrator
	runner           *netRunner
	book             *rules.RuleBook
}

func newNetGrant(t *testing.T, policy Policy, ruleSet string, dests []netproxy.Destination, answers ...ReviewDecision) *netGrantFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &netGrantFixture{ws: filepath.Join(root, "ws"), rules: filepath.Join(root, "rules"), state: filepath.Join(root, "state"), user: &scriptedUser{answers: answers}}
	os.MkdirAll(f.ws, 0o755)
	os.MkdirAll(f.rules, 0o755)
	if ruleSet != "" {
		os.WriteFile(filepath.Join(f.rules, "net.rules"), []byte(ruleSet), 0o600)
	}
	f.book, err = rules.NewRuleBook([]rules.RuleSource{{Dir: f.rules}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := OpenAuditLog(f.state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	session := NewSessionStore()
	d := NewNetworkDecider(NetworkConfig{Policy: policy, Rules: f.book, Prompter: f.user, Session: session, Audit: audit})
	f.runner = &netRunner{d: d, dests: dests, failExit: 7}
	f.o = &Orchestrator{Policy: policy, Rules: f.book, RulesDir: f.rules, Prompter: f.user, Runner: f.runner, Session: session, Audit: audit}
	return f
}

func (f *netGrantFixture) sandbox(network sandbox.NetworkMode) Sandbox {
	return Sandbox{Mode: WorkspaceWrite, Network: network, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}
}

func (f *netGrantFixture) exec(t *testing.T, network sandbox.NetworkMode, hosts []string, argv ...string) *ExecOutcome {
	t.Helper()
	out, err := f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{
		Argv: argv, Cwd: f.ws, Sandbox: f.sandbox(network), Grant: sandbox.Grant{Network: hosts}}})
	if err != nil {
		t.Fatalf("Exec(%q): %v", argv, err)
	}
	return out
}

func (f *netGrantFixture) audit(t *testing.T) []AuditEvent {
	t.Helper()
	return (&orchFixture{state: f.state}).auditEvents(t)
}

func https(host string) netproxy.Destination {
	return netproxy.Destination{Host: host, Port: 443, Protocol: netproxy.HTTPS}
}

// TestNetworkGrantDialogAndRisk: the dialog names exactly what is added,
// written canonically, and grades it from the host facts the network
// dialog uses: a known registry or the repository's remote is low, an
// unknown host medium, a link-local address high (Deny first, nothing
// remembered). Entries that are not one host are refused.
func TestNetworkGrantDialogAndRisk(t *testing.T) {
	f := newNetGrant(t, Policy{Ask: OnRequest}, "", nil)
	os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[remote \"origin\"]\n\turl = https://git.corp.example/team/app.git\n"), 0o600)
	for _, c := range []struct {
		asked, shown string
		level        risk.Level
		fact         string
	}{
		{"PyPI.org:443", "pypi.org:443", risk.Low, "known package registry"},
		{"git.corp.example", "git.corp.example", risk.Low, "this repository's own git remote"},
		{"downloads.example.net:443", "downloads.example.net:443", risk.Medium, "not a known package registry"},
		{"169.254.169.254:80", "169.254.169.254:80", risk.High, "link-local"},
		{"[FE80::1]:80", "[fe80::1]:80", risk.High, "link-local"},
	} {
		ev := f.o.Evaluator().Evaluate(CommandRequest{Argv: []string{"true"}, Cwd: f.ws, Sandbox: f.sandbox(sandbox.NetworkAsk), Grant: sandbox.Grant{Network: []string{c.asked}}})
		if ev.Decision != rules.Prompt || !ev.GrantAsked || !slices.Equal(ev.Grant.Network, []string{c.shown}) {
			t.Errorf("%s: %s %v %+v (%s)", c.asked, ev.Decision, ev.GrantAsked, ev.Grant, ev.Reason)
			continue
		}
		if ev.Risk.Level != c.level || !strings.Contains(ev.Risk.Facts[0], "grants network to "+c.shown+": ") || !strings.Contains(ev.Risk.Facts[0], c.fact) {
			t.Errorf("%s: risk %s %q", c.asked, ev.Risk.Level, ev.Risk.Facts)
		}
		p := f.o.commandPrompt(PromptCommand, ExecRequest{CommandRequest: CommandRequest{Argv: []string{"true"}, Cwd: f.ws, Sandbox: f.sandbox(sandbox.NetworkAsk)}}, ev, true)
		p.Grant = ev.Grant
		if msg := p.Message(); !strings.Contains(msg, "in the sandbox with network to "+c.shown+"?") {
			t.Errorf("%s: dialog does not say what is added:\n%s", c.asked, msg)
		}
		if first := p.Actions()[0].Title; (c.level == risk.High) != (first == TitleDeny) || (c.level == risk.High) == p.AllowSession {
			t.Errorf("%s: first action %q, session %v", c.asked, first, p.AllowSession)
		}
	}
	for _, bad := range []string{"*.pypi.org", "0x7f000001", "pypi.org:99999", "https://pypi.org/simple", "pypi.org:0", "user@pypi.org"} {
		ev := f.o.Evaluator().Evaluate(CommandRequest{Argv: []string{"true"}, Cwd: f.ws, Sandbox: f.sandbox(sandbox.NetworkAsk), Grant: sandbox.Grant{Network: []string{bad}}})
		if ev.Decision != rules.Forbidden || !strings.Contains(ev.Reason, "additional permissions refused") {
			t.Errorf("%q: %s %s", bad, ev.Decision, ev.Reason)
		}
	}
}

// TestNetworkGrantGrantedDeniedCached: approved, the command runs in the
// sandbox with exactly the grant, the proxy lets the granted host through
// without a dialog (another host still asks), the model and the audit log
// are told; denied, nothing runs; "Allow for session" remembers the command
// with its grant: the same or a subset runs without asking, more asks.
func TestNetworkGrantGrantedDeniedCached(t *testing.T) {
	dests := []netproxy.Destination{https("pypi.org")}
	f := newNetGrant(t, Policy{Ask: OnRequest}, "", dests, Approved, Denied)
	out := f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "pip", "download", "six")
	if !out.Ran || out.Escalated || out.Result.ExitCode != 0 || !slices.Equal(out.Grant.Network, []string{"pypi.org:443"}) {
		t.Fatalf("granted: %+v %+v", out, out.Result)
	}
	if p := f.user.prompts(); len(p) != 1 || p[0].Kind != PromptCommand || !slices.Equal(p[0].Grant.Network, []string{"pypi.org:443"}) {
		t.Fatalf("prompts: %+v", p)
	}
	if (Sandbox{}).DescribeGrant(out.Grant) != "network to pypi.org:443" {
		t.Errorf("the model is told %q", (Sandbox{}).DescribeGrant(out.Grant))
	}
	var audited bool
	for _, ev := range f.audit(t) {
		if ev.Event == "run" && ev.Grant != nil && slices.Equal(ev.Grant.Network, []string{"pypi.org:443"}) && *ev.Sandboxed {
			audited = true
		}
	}
	if !audited {
		t.Error("the audit log does not record the run's network grant")
	}
	// Escape: the grant names port 443; the same host on another port and
	// another host are outside it (the second dialog is answered Deny).
	f.runner.dests = []netproxy.Destination{{Host: "pypi.org", Port: 8443, Protocol: netproxy.HTTPS}}
	f.user.answers = []ReviewDecision{Approved, Denied}
	out = f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "pip", "download", "seven")
	if out.Result.ExitCode == 0 || len(out.Result.RefusedHosts) != 0 {
		t.Errorf("another port through a port grant: %+v", out.Result)
	}
	if p := f.user.prompts(); len(p) != 3 || p[2].Kind != PromptNetwork || p[2].Network.Port != 8443 {
		t.Errorf("the other port was not asked about: %+v", p)
	}

	f = newNetGrant(t, Policy{Ask: OnRequest}, "", dests, Denied)
	if out := f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "pip", "download", "six"); out.Ran || out.Refused == "" || len(f.runner.runs()) != 0 {
		t.Errorf("denied: %+v", out)
	}

	f = newNetGrant(t, Policy{Ask: OnRequest}, "", []netproxy.Destination{https("files.pythonhosted.org")}, ApprovedForSession, Approved)
	both := []string{"pypi.org:443", "files.pythonhosted.org:443"}
	f.exec(t, sandbox.NetworkAsk, both, "pip", "download", "six")
	f.exec(t, sandbox.NetworkAsk, []string{"files.pythonhosted.org:443"}, "pip", "download", "six")
	if n := len(f.user.prompts()); n != 1 {
		t.Fatalf("a subset asked again: %d prompts", n)
	}
	f.exec(t, sandbox.NetworkAsk, append(both, "evil.example:443"), "pip", "download", "six")
	if p := f.user.prompts(); len(p) != 2 || !slices.Contains(p[1].Grant.Network, "evil.example:443") {
		t.Errorf("more hosts were not asked about: %+v", p)
	}
	if runs := f.runner.runs(); len(runs) != 3 || !slices.Equal(runs[1].Grant.Network, []string{"files.pythonhosted.org:443"}) {
		t.Errorf("runs %+v", runs)
	}
}

// TestNetworkGrantPersisted: Always allow saves the prefix rule with its
// network grant; reloaded, the command runs sandboxed with the grant and
// the proxy does not ask for that host (nobody could answer).
func TestNetworkGrantPersisted(t *testing.T) {
	dests := []netproxy.Destination{https("pypi.org")}
	f := newNetGrant(t, Policy{Ask: OnRequest}, "", dests, ApprovedWithAmendment)
	out := f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "pip", "download", "six")
	if !out.Ran || out.Result.ExitCode != 0 {
		t.Fatalf("approved: %+v", out)
	}
	data, _ := os.ReadFile(filepath.Join(f.rules, rules.DefaultRulesFile))
	if !strings.Contains(string(data), `additional_permissions={"network": ["pypi.org:443"]}`) {
		t.Fatalf("rule without its grant:\n%s", data)
	}
	g := newNetGrant(t, Policy{Ask: OnRequest}, string(data), dests) // no answers: any dialog denies
	out = g.exec(t, sandbox.NetworkAsk, nil, "pip", "download", "six")
	runs := g.runner.runs()
	if !out.Ran || out.Result.ExitCode != 0 || len(g.user.prompts()) != 0 || len(runs) != 1 || runs[0].Unsandboxed || !slices.Equal(runs[0].Grant.Network, []string{"pypi.org:443"}) {
		t.Fatalf("reloaded rule: %+v %+v prompts %d runs %+v", out, out.Result, len(g.user.prompts()), runs)
	}
	// Twin: the rule's grant is that host only.
	g.runner.dests = []netproxy.Destination{https("evil.example")}
	if out := g.exec(t, sandbox.NetworkAsk, nil, "pip", "download", "six"); out.Result.ExitCode == 0 {
		t.Errorf("the rule's grant opened another host: %+v", out.Result)
	}
	// Under network off the rule's network grant is not applied.
	ev := g.o.Evaluator().Evaluate(CommandRequest{Argv: []string{"pip", "download", "six"}, Cwd: g.ws, Sandbox: g.sandbox(sandbox.NetworkOff)})
	if !ev.Grant.IsZero() || !strings.Contains(ev.Reason, "not applied") {
		t.Errorf("rule grant under network off: %+v %s", ev.Grant, ev.Reason)
	}
}

// TestNetworkGrantRefused: under never the request is refused; under
// network off it is refused with the reason, whatever the policy; neither
// runs anything.
func TestNetworkGrantRefused(t *testing.T) {
	f := newNetGrant(t, Policy{Ask: Never}, "", nil)
	if out := f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "true"); out.Ran || out.Evaluation.Decision != rules.Forbidden {
		t.Errorf("under never: %+v", out)
	}
	f = newNetGrant(t, Policy{Ask: OnRequest}, "", nil, Approved)
	out := f.exec(t, sandbox.NetworkOff, []string{"pypi.org:443"}, "true")
	if out.Ran || !strings.Contains(out.Refused, `network grants need network_access = "ask"`) || len(f.user.prompts()) != 0 {
		t.Errorf("under network off: %+v", out)
	}
	// Twin: the same command without the grant runs.
	if out := f.exec(t, sandbox.NetworkOff, nil, "true"); !out.Ran {
		t.Errorf("twin: %+v", out)
	}
}

// TestNetworkRetryWithGrant: a run whose host the proxy refused for a
// reason a grant overrides (the granular policy rejecting network prompts,
// a dialog nobody answered) gets a retry dialog offering exactly that host
// in the sandbox, with running unsandboxed as a separate action; approved,
// it reruns sandboxed with the grant and the host is reached. No retry is
// offered after a forbid rule, the user's own Deny, a link-local address,
// a command that succeeded anyway, or under on-request.
func TestNetworkRetryWithGrant(t *testing.T) {
	granular := Policy{Ask: Granular, Reject: RejectCategories{Network: true}}
	host := netproxy.Destination{Host: "127.0.0.1", Port: 8080, Protocol: netproxy.HTTP}
	f := newNetGrant(t, granular, "", []netproxy.Destination{host}, Approved)
	out := f.exec(t, sandbox.NetworkAsk, nil, "curl", "http://127.0.0.1:8080/")
	p := f.user.prompts()
	if len(p) != 1 || p[0].Kind != PromptRetry || !slices.Equal(p[0].Added.Network, []string{"127.0.0.1:8080"}) || !p[0].Sandboxed {
		t.Fatalf("retry prompt: %+v", p)
	}
	msg := p[0].Message()
	if !strings.Contains(msg, "Retry it in the sandbox with network to 127.0.0.1:8080?") || !strings.Contains(msg, "granular approval policy rejects network prompts") {
		t.Errorf("retry dialog:\n%s", msg)
	}
	var titles []string
	for _, a := range p[0].Actions() {
		titles = append(titles, a.Title)
	}
	if !slices.Contains(titles, TitleAllowOnce) || !slices.Contains(titles, TitleRunUnsandboxed) || titles[0] == TitleRunUnsandboxed {
		t.Errorf("actions %q", titles)
	}
	runs := f.runner.runs()
	if !out.Ran || out.Escalated || out.Result.ExitCode != 0 || len(runs) != 2 || runs[1].Unsandboxed || !slices.Equal(runs[1].Grant.Network, []string{"127.0.0.1:8080"}) {
		t.Fatalf("retry: %+v %+v runs %+v", out, out.Result, runs)
	}

	// A dialog nobody answered (an error, as a timeout is) is retryable.
	f = newNetGrant(t, Policy{Ask: OnFailure}, "", []netproxy.Destination{host})
	f.user.err = context.DeadlineExceeded
	out = f.exec(t, sandbox.NetworkAsk, nil, "curl", "http://127.0.0.1:8080/")
	if p := f.user.prompts(); len(p) != 2 || p[0].Kind != PromptNetwork || p[1].Kind != PromptRetry {
		t.Errorf("after a timed-out dialog: %+v", p)
	}

	// Refused five hosts: no narrow grant to offer.
	var many []netproxy.Destination
	for i := 1; i <= 5; i++ {
		many = append(many, netproxy.Destination{Host: fmt.Sprintf("h%d.example", i), Port: 443, Protocol: netproxy.HTTPS})
	}
	f = newNetGrant(t, granular, "", many)
	if f.exec(t, sandbox.NetworkAsk, nil, "curl", "http://x/"); len(f.user.prompts()) != 0 {
		t.Errorf("five refused hosts: %+v", f.user.prompts())
	}
	f = newNetGrant(t, granular, "", many[:4], Approved)
	if out := f.exec(t, sandbox.NetworkAsk, nil, "curl", "http://x/"); len(f.user.prompts()) != 1 || len(f.user.prompts()[0].Added.Network) != 4 || out.Result.ExitCode != 0 {
		t.Errorf("four refused hosts (twin): %+v", f.user.prompts())
	}

	for name, c := range map[string]struct {
		policy  Policy
		rules   string
		dest    netproxy.Destination
		answers []ReviewDecision
		exit    int
		dialogs int
	}{
		"forbid rule":  {granular, `network_rule(host="127.0.0.1", decision="forbidden")`, host, nil, 7, 0},
		"user's deny":  {Policy{Ask: OnFailure}, "", host, []ReviewDecision{Denied}, 7, 1},
		"link-local":   {granular, "", netproxy.Destination{Host: "169.254.169.254", Port: 80, Protocol: netproxy.HTTP}, nil, 7, 0},
		"succeeded":    {granular, "", host, nil, 0, 0},
		"on-request":   {Policy{Ask: OnRequest}, "", host, []ReviewDecision{Denied}, 7, 1},
		"never (twin)": {Policy{Ask: Never}, "", host, nil, 7, 0},
	} {
		f := newNetGrant(t, c.policy, c.rules, []netproxy.Destination{c.dest}, c.answers...)
		f.runner.failExit = c.exit
		out := f.exec(t, sandbox.NetworkAsk, nil, "curl", "http://x/")
		if p := f.user.prompts(); len(p) != c.dialogs || len(f.runner.runs()) != 1 {
			t.Errorf("%s: %d dialogs, %d runs: %+v", name, len(p), len(f.runner.runs()), p)
		}
		if out.Escalated {
			t.Errorf("%s: escalated", name)
		}
	}
}

// TestNetworkGrantRuleCoversPorts: a rule granting a host on any port
// covers a request for that host on one port (no dialog); a request for
// another host asks; a rule granting one port does not cover another.
func TestNetworkGrantRuleCoversPorts(t *testing.T) {
	ruleSet := `prefix_rule(pattern=["pip"], decision="allow", additional_permissions={"network": ["pypi.org"]})` + "\n" +
		`prefix_rule(pattern=["npm"], decision="allow", additional_permissions={"network": ["registry.npmjs.org:443"]})` + "\n"
	f := newNetGrant(t, Policy{Ask: OnRequest}, ruleSet, nil)
	for _, c := range []struct {
		argv  []string
		asked string
		want  rules.Decision
	}{
		{[]string{"pip", "download", "six"}, "pypi.org:443", rules.Allow},
		{[]string{"pip", "download", "six"}, "PyPI.org", rules.Allow},
		{[]string{"pip", "download", "six"}, "files.pythonhosted.org:443", rules.Prompt},
		{[]string{"npm", "view", "x"}, "registry.npmjs.org:443", rules.Allow},
		{[]string{"npm", "view", "x"}, "registry.npmjs.org:8443", rules.Prompt},
		{[]string{"npm", "view", "x"}, "registry.npmjs.org", rules.Prompt},
	} {
		ev := f.o.Evaluator().Evaluate(CommandRequest{Argv: c.argv, Cwd: f.ws, Sandbox: f.sandbox(sandbox.NetworkAsk), Grant: sandbox.Grant{Network: []string{c.asked}}})
		if ev.Decision != c.want || ev.GrantAsked != (c.want == rules.Prompt) || ev.BypassSandbox {
			t.Errorf("%q asking %s: %s asked=%v bypass=%v (%s)", c.argv, c.asked, ev.Decision, ev.GrantAsked, ev.BypassSandbox, ev.Reason)
		}
	}
}

// TestNetworkGrantSessionAnyPortCoversOnePort: "Allow for session" of a
// command with network to a host on any port covers the same command later
// asking for that host on one port, as a rule's grant does. Attacks: the
// session approval of one port never covers another port or the host on
// any port, and the host's approval never covers another host (each asked:
// four dialogs).
func TestNetworkGrantSessionAnyPortCoversOnePort(t *testing.T) {
	argv := []string{"pip", "download", "six"}
	f := newNetGrant(t, Policy{Ask: OnRequest}, "", nil, ApprovedForSession)
	f.exec(t, sandbox.NetworkAsk, []string{"PyPI.org"}, argv...)
	for _, asked := range [][]string{{"pypi.org:443"}, {"pypi.org:8443"}, {"pypi.org"}, {"pypi.org:443", "PYPI.org:80"}} {
		if out := f.exec(t, sandbox.NetworkAsk, asked, argv...); !out.Ran || out.Asked {
			t.Errorf("%v after the host on any port was allowed for the session: ran %v asked %v", asked, out.Ran, out.Asked)
		}
	}
	if p := f.user.prompts(); len(p) != 1 {
		t.Fatalf("harmless twins asked again: %d dialogs", len(p))
	}
	// Attack: another host, alone or beside the remembered one.
	f.user.answers = []ReviewDecision{Denied, Denied}
	for _, asked := range [][]string{{"files.pythonhosted.org:443"}, {"pypi.org:443", "evil.example"}} {
		if out := f.exec(t, sandbox.NetworkAsk, asked, argv...); out.Ran || !out.Asked {
			t.Errorf("%v ran on the session approval of pypi.org: %+v", asked, out)
		}
	}
	// Attack: the session approval of one port covers neither another port
	// nor the host on any port; the same port stays remembered (twin).
	f = newNetGrant(t, Policy{Ask: OnRequest}, "", nil, ApprovedForSession, Denied, Denied)
	f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, argv...)
	for _, c := range []struct {
		asked []string
		ask   bool
	}{{[]string{"pypi.org:8443"}, true}, {[]string{"pypi.org"}, true}, {[]string{"PyPI.org:443"}, false}} {
		if out := f.exec(t, sandbox.NetworkAsk, c.asked, argv...); out.Asked != c.ask || out.Ran == c.ask {
			t.Errorf("%v after pypi.org:443 was allowed for the session: ran %v asked %v", c.asked, out.Ran, out.Asked)
		}
	}
	if p := f.user.prompts(); len(p) != 3 {
		t.Errorf("%d dialogs, want 3", len(p))
	}
	// Another command is another key, whatever the host.
	f.user.answers = []ReviewDecision{Denied}
	if out := f.exec(t, sandbox.NetworkAsk, []string{"pypi.org:443"}, "curl", "https://pypi.org"); out.Ran || !out.Asked {
		t.Errorf("another command ran on pip's session approval: %+v", out)
	}
}
