package approvals

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// gatePrompter is a Prompter whose dialogs stay open until the test answers
// them: each Prompt call sends its request on shown and waits for an answer
// on answers (or its context).
type gatePrompter struct {
	shown   chan PromptRequest
	answers chan gateAnswer
	calls   atomic.Int32
	ended   chan error // the context error of a dialog withdrawn unanswered
}

type gateAnswer struct {
	d   ReviewDecision
	err error
}

func newGate() *gatePrompter {
	return &gatePrompter{shown: make(chan PromptRequest, 16), answers: make(chan gateAnswer), ended: make(chan error, 16)}
}

func (g *gatePrompter) Prompt(ctx context.Context, req PromptRequest) (ReviewDecision, error) {
	g.calls.Add(1)
	g.shown <- req
	select {
	case a := <-g.answers:
		return a.d, a.err
	case <-ctx.Done():
		g.ended <- ctx.Err()
		return Denied, ctx.Err()
	}
}

// next waits for the next dialog.
func (g *gatePrompter) next(t *testing.T) PromptRequest {
	t.Helper()
	select {
	case r := <-g.shown:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no dialog was shown")
	}
	return PromptRequest{}
}

func (g *gatePrompter) answer(t *testing.T, d ReviewDecision, err error) {
	t.Helper()
	select {
	case g.answers <- gateAnswer{d, err}:
	case <-time.After(10 * time.Second):
		t.Fatal("nobody took the answer")
	}
}

func netReq(host string, port int, p netproxy.Protocol, run string) netproxy.Request {
	return netproxy.Request{Dest: dst(host, port, p), Origin: netproxy.Origin{RunID: run, Command: []string{"npm", "install"}, Workdir: "/w"}}
}

// decideAll runs n Decide calls at once and returns their verdicts.
func decideAll(ctx context.Context, d *NetworkDecider, n int, req netproxy.Request) <-chan netproxy.Verdict {
	out := make(chan netproxy.Verdict, n)
	for i := 0; i < n; i++ {
		go func() { out <- d.Decide(ctx, req) }()
	}
	return out
}

// waitWaiters waits until n connections wait on the dialog for req's
// destination.
func waitWaiters(t *testing.T, d *NetworkDecider, req netproxy.Request, n int) {
	t.Helper()
	key := NetworkKey(req.Dest)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		p := d.pending[key]
		got := 0
		if p != nil {
			got = p.waiters
		}
		d.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d connections never waited on one dialog", n)
}

// TestNetworkDeciderSharesOneDialog: eight concurrent connections to one
// destination make one dialog; Allow once releases all eight; the next
// connection asks again (once was once).
func TestNetworkDeciderSharesOneDialog(t *testing.T) {
	g := newGate()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g})
	req := netReq("registry.npmjs.org", 443, netproxy.HTTPS, "r1")
	const n = 8
	verdicts := decideAll(context.Background(), d, n, req)
	p := g.next(t)
	waitWaiters(t, d, req, n)
	if p.Kind != PromptNetwork || p.Network.Host != "registry.npmjs.org" || p.Network.Port != 443 {
		t.Fatalf("dialog = %+v", p)
	}
	g.answer(t, Approved, nil)
	for i := 0; i < n; i++ {
		v := <-verdicts
		if !v.Allow || v.Reason != "network to registry.npmjs.org:443 allowed once by the user" {
			t.Errorf("verdict %d = %+v", i, v)
		}
	}
	if c := g.calls.Load(); c != 1 {
		t.Fatalf("%d dialogs for %d concurrent connections, want 1", c, n)
	}
	// Once was once: the next connection asks again.
	again := decideAll(context.Background(), d, 1, req)
	g.next(t)
	g.answer(t, Denied, nil)
	if v := <-again; v.Allow || v.Reason != "network to registry.npmjs.org:443 denied by the user" {
		t.Errorf("after allow once: %+v", v)
	}
	if c := g.calls.Load(); c != 2 {
		t.Errorf("%d dialogs, want 2", c)
	}
	// A different port is a different destination: its own dialog.
	other := decideAll(context.Background(), d, 1, netReq("registry.npmjs.org", 8443, netproxy.HTTPS, "r1"))
	if p := g.next(t); p.Network.Port != 8443 {
		t.Errorf("dialog for port %d", p.Network.Port)
	}
	g.answer(t, Denied, nil)
	<-other
}

// TestNetworkDeciderSession: Allow for session lets later connections to
// the same destination through without a dialog, for any run, and only
// that destination (attack twin: another protocol or port still asks).
func TestNetworkDeciderSession(t *testing.T) {
	g := newGate()
	store := NewSessionStore()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, Session: store})
	req := netReq("pypi.org", 443, netproxy.HTTPS, "r1")
	first := decideAll(context.Background(), d, 1, req)
	p := g.next(t)
	if !p.Network.FirstContact || !p.AllowSession {
		t.Errorf("first dialog: first contact %v, allow session %v", p.Network.FirstContact, p.AllowSession)
	}
	g.answer(t, ApprovedForSession, nil)
	if v := <-first; !v.Allow {
		t.Fatalf("verdict %+v", v)
	}
	// Another decider on the same session store (another run) remembers.
	d2 := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, Session: store})
	for i := 0; i < 3; i++ {
		if v := d2.Decide(context.Background(), netReq("PyPI.org.", 443, netproxy.HTTPS, "r2")); !v.Allow || !strings.Contains(v.Reason, "for this session") {
			t.Errorf("remembered: %+v", v)
		}
	}
	if c := g.calls.Load(); c != 1 {
		t.Fatalf("%d dialogs after allow for session, want 1", c)
	}
	// Plain http to the same host asks, and says the host was met before.
	http := decideAll(context.Background(), d, 1, netReq("pypi.org", 80, netproxy.HTTP, "r1"))
	if p := g.next(t); p.Network.FirstContact {
		t.Error("second destination on the host shown as first contact")
	}
	g.answer(t, Denied, nil)
	if v := <-http; v.Allow {
		t.Errorf("http after https for session: %+v", v)
	}
}

// TestNetworkDeciderAlwaysAllow: "Always allow `<host>`" appends a
// network_rule to default.rules (under the rules lock), puts it in force at
// once, and a fresh load from disk finds it.
func TestNetworkDeciderAlwaysAllow(t *testing.T) {
	rulesDir := filepath.Join(t.TempDir(), "rules")
	writeRules(t, rulesDir, rules.DefaultRulesFile, `prefix_rule(pattern=["git", "status"])`)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: rulesDir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	var notes []string
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, Rules: book, RulesDir: rulesDir,
		Notify: func(m string) { notes = append(notes, m) }})
	req := netReq("crates.io", 443, netproxy.HTTPS, "r1")
	out := decideAll(context.Background(), d, 1, req)
	p := g.next(t)
	titles := actionTitles(p)
	want := []string{TitleAllowOnce, TitleAllowSession, "Always allow `crates.io`", TitleDeny, TitleDenyAndStop}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("actions %q, want %q", titles, want)
	}
	g.answer(t, p.DecisionFor("Always allow `crates.io`"), nil)
	if v := <-out; !v.Allow || v.Reason != "network to crates.io:443 always allowed by the user" {
		t.Fatalf("verdict %+v", v)
	}
	data, err := os.ReadFile(filepath.Join(rulesDir, rules.DefaultRulesFile))
	if err != nil {
		t.Fatal(err)
	}
	line := `network_rule(host="crates.io", protocol="https", decision="allow")`
	if !strings.Contains(string(data), "prefix_rule(pattern=[\"git\", \"status\"])\n"+line+"\n") {
		t.Errorf("default.rules:\n%s", data)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "always allow crates.io") {
		t.Errorf("notes = %q", notes)
	}
	// In force at once, without a dialog.
	if v := d.Decide(context.Background(), req); !v.Allow || !strings.Contains(v.Reason, "allowed by rule at default.rules") {
		t.Errorf("after always allow: %+v", v)
	}
	// Reloaded from disk, by a new book.
	fresh, err := rules.NewRuleBook([]rules.RuleSource{{Dir: rulesDir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := fresh.Current()
	if ev := EvaluateNetwork(set, Policy{Ask: OnRequest}, req.Dest); ev.Decision != rules.Allow || !strings.Contains(ev.Reason, rules.DefaultRulesFile+":2") {
		t.Errorf("reloaded: %s %s", ev.Decision, ev.Reason)
	}
	if c := g.calls.Load(); c != 1 {
		t.Errorf("%d dialogs, want 1", c)
	}
	// The same answer twice writes the line once.
	if added, err := rules.AppendNetworkAllowRule(rulesDir, "crates.io", netproxy.HTTPS); added || err != nil {
		t.Errorf("second append: added %v, %v", added, err)
	}
	// A host that is not one exact host is never written.
	for _, h := range []string{"*.crates.io", "a b", "x\n"} {
		if _, err := rules.AppendNetworkAllowRule(rulesDir, h, netproxy.HTTPS); err == nil {
			t.Errorf("appended a rule for %q", h)
		}
	}
}

func actionTitles(p PromptRequest) []string {
	var out []string
	for _, a := range p.Actions() {
		out = append(out, a.Title)
	}
	return out
}

// TestNetworkDeciderDenyAndStop: "Deny and stop" refuses every connection
// waiting on the dialog and stops their runs (and only theirs).
func TestNetworkDeciderDenyAndStop(t *testing.T) {
	g := newGate()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g})
	var stopped sync.Map
	for _, id := range []string{"r1", "r2", "bystander"} {
		id := id
		defer d.RegisterRun(id, func() { stopped.Store(id, true) })()
	}
	a := decideAll(context.Background(), d, 1, netReq("exfil.example", 443, netproxy.HTTPS, "r1"))
	g.next(t)
	b := decideAll(context.Background(), d, 1, netReq("exfil.example", 443, netproxy.HTTPS, "r2"))
	waitWaiters(t, d, netReq("exfil.example", 443, netproxy.HTTPS, ""), 2)
	g.answer(t, Abort, nil)
	for _, out := range []<-chan netproxy.Verdict{a, b} {
		if v := <-out; v.Allow || v.Reason != "network to exfil.example:443 denied by the user, who stopped the command" {
			t.Errorf("verdict %+v", v)
		}
	}
	for id, want := range map[string]bool{"r1": true, "r2": true, "bystander": false} {
		if _, got := stopped.Load(id); got != want {
			t.Errorf("run %s stopped = %v, want %v", id, got, want)
		}
	}
	// An unregistered run is not stopped twice nor looked up after.
	unreg := d.RegisterRun("r3", func() { t.Error("unregistered run stopped") })
	unreg()
	c := decideAll(context.Background(), d, 1, netReq("exfil.example", 443, netproxy.HTTPS, "r3"))
	g.next(t)
	g.answer(t, Abort, nil)
	if v := <-c; v.Allow || v.Reason != "network to exfil.example:443 denied by the user (deny and stop)" {
		t.Errorf("unregistered run: %+v", v)
	}
}

// TestNetworkDeciderFailsClosed: a dismissed dialog, a timeout, a lost
// editor, an answer that was not offered, no prompter, an ended connection:
// all deny.
func TestNetworkDeciderFailsClosed(t *testing.T) {
	req := netReq("example.org", 443, netproxy.HTTPS, "r1")
	for _, c := range []struct {
		name string
		ans  gateAnswer
		want string
	}{
		{"dismissed", gateAnswer{Denied, errors.New("the approval dialog was dismissed")}, "network to example.org:443 denied: the approval dialog was dismissed"},
		{"timeout", gateAnswer{Approved, errors.New("the approval dialog was not answered within 1s")}, "not answered within 1s"},
		{"lost editor", gateAnswer{Approved, errors.New("the approval dialog failed: connection closed")}, "connection closed"},
	} {
		g := newGate()
		d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g})
		out := decideAll(context.Background(), d, 1, req)
		g.next(t)
		g.answer(t, c.ans.d, c.ans.err)
		if v := <-out; v.Allow || v.Reason != c.want && !strings.Contains(v.Reason, c.want) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}

	// A high-risk dialog offers no session answer: a prompter that returns
	// one anyway is refused.
	g := newGate()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, RulesDir: t.TempDir()})
	out := decideAll(context.Background(), d, 1, netReq("169.254.169.254", 80, netproxy.HTTP, "r1"))
	p := g.next(t)
	if p.AllowSession || p.Network.Amend || actionTitles(p)[0] != TitleDeny {
		t.Errorf("metadata address dialog offers %q", actionTitles(p))
	}
	g.answer(t, ApprovedForSession, nil)
	if v := <-out; v.Allow || !strings.Contains(v.Reason, "was not offered") {
		t.Errorf("unoffered answer: %+v", v)
	}

	// No prompter: deny without a dialog.
	d = NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}})
	if v := d.Decide(context.Background(), req); v.Allow || !strings.Contains(v.Reason, "nobody could be asked") {
		t.Errorf("no prompter: %+v", v)
	}

	// The connection ends while the dialog is open: that connection is
	// refused and, being the only one waiting, the dialog is withdrawn; a
	// later connection gets a new dialog.
	g = newGate()
	d = NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g})
	ctx, cancel := context.WithCancel(context.Background())
	out = decideAll(ctx, d, 1, req)
	g.next(t)
	cancel()
	if v := <-out; v.Allow || !strings.Contains(v.Reason, "the connection ended before the user answered") {
		t.Errorf("ended connection: %+v", v)
	}
	select {
	case <-g.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the dialog was not withdrawn when its last connection ended")
	}
	out = decideAll(context.Background(), d, 1, req)
	g.next(t)
	g.answer(t, Approved, nil)
	if v := <-out; !v.Allow {
		t.Errorf("after a withdrawn dialog: %+v", v)
	}

	// One of two waiters leaves: the dialog stays for the other.
	ctx, cancel = context.WithCancel(context.Background())
	leaver := decideAll(ctx, d, 1, req)
	g.next(t)
	stayer := decideAll(context.Background(), d, 1, req)
	waitWaiters(t, d, req, 2)
	cancel()
	if v := <-leaver; v.Allow {
		t.Errorf("leaver allowed: %+v", v)
	}
	g.answer(t, Approved, nil)
	if v := <-stayer; !v.Allow {
		t.Errorf("stayer: %+v", v)
	}

	// Already ended before deciding, or not a destination: refused.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if v := d.Decide(done, req); v.Allow {
		t.Errorf("ended context: %+v", v)
	}
	if v := d.Decide(context.Background(), netReq("", 443, netproxy.HTTPS, "")); v.Allow {
		t.Errorf("empty host: %+v", v)
	}
	if v := d.Decide(context.Background(), netReq("example.org", 0, netproxy.HTTPS, "")); v.Allow {
		t.Errorf("port 0: %+v", v)
	}
}

// TestNetworkDeciderPolicyAndRules: never refuses without a dialog; a
// forbid rule refuses with its file:line; an allow rule allows without a
// dialog (twin).
func TestNetworkDeciderPolicyAndRules(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, "n.rules", `network_rule(host="*.internal.example", decision="forbidden", justification="intranet")
network_rule(host="proxy.golang.org", protocol="https", decision="allow")
`)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	for _, policy := range []Policy{{Ask: OnRequest}, {Ask: Never}} {
		d := NewNetworkDecider(NetworkConfig{Policy: policy, Prompter: g, Rules: book})
		v := d.Decide(context.Background(), netReq("wiki.internal.example", 443, netproxy.HTTPS, ""))
		if v.Allow || v.Reason != "network to wiki.internal.example:443 forbidden by rule at "+filepath.Join(dir, "n.rules")+":1: intranet" {
			t.Errorf("%s forbid: %+v", policy.Ask, v)
		}
		if v := d.Decide(context.Background(), netReq("proxy.golang.org", 443, netproxy.HTTPS, "")); !v.Allow {
			t.Errorf("%s allow rule: %+v", policy.Ask, v)
		}
	}
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: Never}, Prompter: g, Rules: book})
	if v := d.Decide(context.Background(), netReq("pypi.org", 443, netproxy.HTTPS, "")); v.Allow || v.Reason != "network to pypi.org:443 refused: approval policy is never" {
		t.Errorf("never: %+v", v)
	}
	if c := g.calls.Load(); c != 0 {
		t.Errorf("%d dialogs, want none", c)
	}
}

// TestNetworkDeciderAudit: every connection record and every answer is one
// audit line with host, port, protocol, decision, bytes and the command.
func TestNetworkDeciderAudit(t *testing.T) {
	dir := t.TempDir()
	log, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, Audit: log})
	req := netReq("pypi.org", 443, netproxy.HTTPS, "run-7")
	out := decideAll(context.Background(), d, 1, req)
	g.next(t)
	g.answer(t, Approved, nil)
	v := <-out
	start := time.Now()
	d.Record(netproxy.Record{Dest: req.Dest, Origin: req.Origin, Verdict: v, BytesUp: 1200, BytesDown: 345678, Start: start, Duration: 1500 * time.Millisecond})
	d.Record(netproxy.Record{Dest: dst("evil.example", 80, netproxy.HTTP), Origin: req.Origin, Verdict: deny("network to evil.example:80 denied by the user"), Start: start})
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []AuditEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 {
		t.Fatalf("%d audit lines, want 3: %+v", len(evs), evs)
	}
	if e := evs[0]; e.Event != "decision" || e.Kind != "network" || e.Decision != "approved" || e.Network.Host != "pypi.org" || e.Network.Port != 443 {
		t.Errorf("decision line %+v %+v", e, e.Network)
	}
	e := evs[1]
	if e.Event != "connection" || e.Decision != "allow" || e.Network.Protocol != "https" || e.Network.BytesUp != 1200 ||
		e.Network.BytesDown != 345678 || e.Network.DurationMS != 1500 || e.Network.RunID != "run-7" ||
		strings.Join(e.Argv, " ") != "npm install" || e.Cwd != "/w" || !strings.Contains(e.Reason, "allowed once") {
		t.Errorf("connection line %+v %+v", e, e.Network)
	}
	if e := evs[2]; e.Decision != "deny" || e.Network.Host != "evil.example" || e.Network.BytesUp != 0 || e.Reason == "" {
		t.Errorf("refused line %+v %+v", e, e.Network)
	}
}

// TestNetworkDeciderDisguisedAddresses: an IPv4 address spelled as C
// resolvers also read it (one number, hex, octal, fewer dots) would pass a
// rule or a fact written for the dotted quad: it is refused without a
// dialog (attack); the dotted quad itself is asked about, as high risk for
// the metadata address (twins). A host that cannot be written as a rule is
// never offered "Always allow" (attack: a quote in the host), a plain one is.
func TestNetworkDeciderDisguisedAddresses(t *testing.T) {
	g := newGate()
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g, RulesDir: t.TempDir()})
	for _, h := range []string{"2852039166", "0xa9fea9fe", "169.254.43518", "0251.0376.0251.0376", "0xa9.0xfe.0xa9.0xfe", "127.1"} {
		if v := d.Decide(context.Background(), netReq(h, 80, netproxy.HTTP, "")); v.Allow || !strings.Contains(v.Reason, "dotted quad") {
			t.Errorf("%s: %+v", h, v)
		}
	}
	if c := g.calls.Load(); c != 0 {
		t.Fatalf("%d dialogs for disguised addresses", c)
	}
	r := risk.Assess(command.Analyze([]string{"curl", "http://0xa9fea9fe/latest/meta-data/"}), risk.Context{Cwd: t.TempDir(), Home: t.TempDir()})
	if r.Level != risk.High {
		t.Errorf("curl to a disguised address: risk %s %q", r.Level, r.Facts)
	}
	for _, c := range []struct {
		host      string
		high      bool
		amendable bool
	}{
		{"169.254.169.254", true, false},
		{"1.2.3.4", false, true},
		{"pypi.org", false, true},
		{`pypi.org")` + "\n" + `network_rule(host="*.com`, false, false},
	} {
		out := decideAll(context.Background(), d, 1, netReq(c.host, 80, netproxy.HTTP, ""))
		p := g.next(t)
		if (p.Risk.Level == risk.High) != c.high || p.Network.Amend != c.amendable {
			t.Errorf("%q: risk %s, always allow offered %v", c.host, p.Risk.Level, p.Network.Amend)
		}
		g.answer(t, Denied, nil)
		<-out
	}
	if _, err := rules.AppendNetworkAllowRule(t.TempDir(), `pypi.org")`+"\n"+`network_rule(host="*.com`, netproxy.HTTPS); err == nil {
		t.Error("a host with a quote and a newline was written as a rule")
	}
}

// TestNetworkDeciderGrantHosts: the hosts granted to a run are reached
// without a dialog, even under never (the grant was approved with the
// command), on the granted port only when one is given; a forbid rule is
// stronger, another run or another host still asks, and a revoked grant is
// gone.
func TestNetworkDeciderGrantHosts(t *testing.T) {
	p := mustParse(t, `network_rule(host="evil.example", decision="forbidden")`)
	book := rules.BookOf(&rules.RuleSet{Network: p.NetworkRules})
	g := newGate()
	for _, policy := range []Policy{{Ask: OnRequest}, {Ask: Never}} {
		d := NewNetworkDecider(NetworkConfig{Policy: policy, Prompter: g, Rules: book})
		revoke := d.GrantHosts("r1", []string{"PyPI.org", "files.example:443", "evil.example", "bad:port", "0x7f000001"})
		for _, c := range []struct {
			req   netproxy.Request
			allow bool
		}{
			{netReq("pypi.org", 443, netproxy.HTTPS, "r1"), true},
			{netReq("pypi.org", 80, netproxy.HTTP, "r1"), true},
			{netReq("files.example", 443, netproxy.HTTPS, "r1"), true},
			{netReq("evil.example", 443, netproxy.HTTPS, "r1"), false},
		} {
			if v := d.Decide(context.Background(), c.req); v.Allow != c.allow {
				t.Errorf("%s %s: %+v", policy.Ask, c.req.Dest, v)
			}
		}
		if policy.Ask == Never {
			for _, r := range []netproxy.Request{netReq("files.example", 8443, netproxy.HTTPS, "r1"), netReq("pypi.org", 443, netproxy.HTTPS, "r2")} {
				if v := d.Decide(context.Background(), r); v.Allow {
					t.Errorf("outside the grant under never: %s %+v", r.Dest, v)
				}
			}
		}
		revoke()
		if policy.Ask == Never {
			if v := d.Decide(context.Background(), netReq("pypi.org", 443, netproxy.HTTPS, "r1")); v.Allow {
				t.Errorf("revoked grant still allows: %+v", v)
			}
		}
	}
	if c := g.calls.Load(); c != 0 {
		t.Errorf("%d dialogs", c)
	}
	// Outside the grant, on-request asks.
	d := NewNetworkDecider(NetworkConfig{Policy: Policy{Ask: OnRequest}, Prompter: g})
	defer d.GrantHosts("r1", []string{"pypi.org"})()
	out := decideAll(context.Background(), d, 1, netReq("pypi.org", 443, netproxy.HTTPS, "r2"))
	g.next(t)
	g.answer(t, Denied, nil)
	if v := <-out; v.Allow {
		t.Errorf("another run: %+v", v)
	}
}
