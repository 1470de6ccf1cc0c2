package approvals

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
)

// grantFixture is an orchestrator with a workspace, a fake home holding
// a credential store, and two directories outside the writable roots.
type grantFixture struct {
	*orchFixture
	home, a, b, secret string
}

func newGrantOrch(t *testing.T, ask AskForApproval, answers ...ReviewDecision) *grantFixture {
	t.Helper()
	f := &grantFixture{orchFixture: newOrch(t, ask, answers...)}
	root, err := filepath.EvalSymlinks(filepath.Dir(f.ws))
	if err != nil {
		t.Fatal(err)
	}
	f.ws = filepath.Join(root, "ws")
	f.home, f.a, f.b = filepath.Join(root, "home"), filepath.Join(root, "out", "A"), filepath.Join(root, "out", "B")
	f.secret = filepath.Join(f.home, ".ssh", "id_deploy")
	for _, d := range []string{f.a, f.b, filepath.Join(f.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{f.secret, filepath.Join(f.home, ".ssh", "id_other")} {
		if err := os.WriteFile(p, []byte("SECRET-"+filepath.Base(p)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *grantFixture) sandbox() Sandbox {
	return Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}, Reads: sandbox.ReadPolicy{Home: f.home}}
}

func (f *grantFixture) run(t *testing.T, g sandbox.Grant, argv ...string) (*ExecOutcome, string) {
	t.Helper()
	var out strings.Builder
	w := writerFunc(func(b []byte) (int, error) { return out.Write(b) })
	res, err := f.o.Exec(context.Background(), ExecRequest{
		CommandRequest: CommandRequest{Argv: argv, Cwd: f.ws, Sandbox: f.sandbox(), Grant: g},
		Stdout:         w, Stderr: w, Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatalf("Exec(%q): %v", argv, err)
	}
	return res, out.String()
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// script writes an executable script into the workspace: what it does is
// hidden from the static analysis, as a build script's writes are, so only
// the sandbox stops it.
func (f *grantFixture) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(f.ws, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGrantWriteGrantedAndDenied: the dialog names exactly the grant, and
// approval runs the command sandboxed with it: the write lands in A; a
// write to B in the same command does not. A denial runs nothing.
func TestGrantWriteGrantedAndDenied(t *testing.T) {
	f := newGrantOrch(t, OnRequest, Approved, Approved)
	res, out := f.run(t, sandbox.Grant{Write: []string{f.a}}, "sh", "-c", "echo hi > "+f.a+"/f")
	p := f.user.prompts()
	if len(p) != 1 || p[0].Kind != PromptCommand || !p[0].Sandboxed || !slices.Equal(p[0].Grant.Write, []string{f.a}) {
		t.Fatalf("prompts %+v", p)
	}
	msg := p[0].Message()
	if !strings.Contains(msg, "in the sandbox with write access to "+f.a+"?") || !strings.Contains(msg, "plus write access to "+f.a+", nothing else") {
		t.Errorf("dialog does not say what is added:\n%s", msg)
	}
	if acts := p[0].Actions(); acts[0].Title != TitleAllowOnce || acts[1].Title != TitleAllowSession || acts[len(acts)-1].Title != TitleDenyAndStop {
		t.Errorf("actions %+v", acts)
	}
	if !res.Ran || res.Escalated || !slices.Equal(res.Grant.Write, []string{f.a}) {
		t.Fatalf("outcome %+v", res)
	}
	if !exists(filepath.Join(f.a, "f")) {
		t.Errorf("the granted write did not land: %s", out)
	}
	// Attack: the same grant, a write to B; the user even allows it.
	res, _ = f.run(t, sandbox.Grant{Write: []string{f.a}}, "sh", "-c", "echo no > "+f.b+"/f")
	if !res.Ran || exists(filepath.Join(f.b, "f")) {
		t.Errorf("a write outside the grant landed: %+v", res)
	}
	var granted bool
	for _, ev := range f.auditEvents(t) {
		if ev.Event == "run" && ev.Grant != nil && slices.Equal(ev.Grant.Write, []string{f.a}) && *ev.Sandboxed {
			granted = true
		}
	}
	if !granted {
		t.Error("the audit log does not record the run's grant")
	}

	f = newGrantOrch(t, OnRequest, Denied)
	res, _ = f.run(t, sandbox.Grant{Write: []string{f.a}}, "touch", f.a+"/denied")
	if res.Ran || res.Refused == "" || exists(filepath.Join(f.a, "denied")) {
		t.Errorf("denied grant: %+v", res)
	}
}

// TestGrantSessionCache: Allow for session remembers the command with its
// grant; the same or a subset runs without a prompt, more asks again.
func TestGrantSessionCache(t *testing.T) {
	f := newGrantOrch(t, OnRequest, ApprovedForSession, Denied)
	both := sandbox.Grant{Write: []string{f.a, f.b}}
	if res, _ := f.run(t, both, "touch", f.a+"/1"); !res.Ran || !res.Asked {
		t.Fatalf("first: %+v", res)
	}
	if res, _ := f.run(t, sandbox.Grant{Write: []string{f.a}}, "touch", f.a+"/1"); !res.Ran || res.Asked {
		t.Fatalf("a subset of the remembered grant asked again: %+v", res)
	}
	if !exists(filepath.Join(f.a, "1")) {
		t.Fatal("the write did not land")
	}
	more := sandbox.Grant{Write: []string{f.a, f.b, f.home}}
	if res, _ := f.run(t, more, "touch", f.a+"/1"); res.Ran || len(f.user.prompts()) != 2 {
		t.Fatalf("a larger grant did not ask again: %+v, %d prompts", res, len(f.user.prompts()))
	}
	// The twin: the same command without a grant is a different request
	// (known-safe commands aside, it runs sandboxed and is blocked).
	if res, _ := f.run(t, sandbox.Grant{}, "touch", f.a+"/2"); exists(filepath.Join(f.a, "2")) {
		t.Errorf("a request without the grant wrote to A: %+v", res)
	}
}

// TestGrantAlwaysAllowPersistsTheGrant: the saved rule carries the grant;
// reloaded, it lets the command run sandboxed with the grant and no
// prompt; it never takes it out of the sandbox.
func TestGrantAlwaysAllowPersistsTheGrant(t *testing.T) {
	f := newGrantOrch(t, OnRequest, ApprovedWithAmendment)
	// Always allow is offered for a prefix that lasts: a directory with a
	// plain name beside the package's tests, not in a temporary directory.
	f.a = lastingDir(t)
	res, _ := f.run(t, sandbox.Grant{Write: []string{f.a}}, "touch", f.a+"/first")
	if !res.Ran || !exists(filepath.Join(f.a, "first")) {
		t.Fatalf("%+v", res)
	}
	data, err := os.ReadFile(filepath.Join(f.rules, rules.DefaultRulesFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `additional_permissions={"write": ["`+f.a+`"]}`) {
		t.Fatalf("saved rule has no grant:\n%s", data)
	}
	// A fresh orchestrator reads the rule from disk; nobody answers.
	g := newGrantOrch(t, OnRequest)
	g.home, g.a, g.b, g.secret = f.home, f.a, f.b, f.secret
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: f.rules}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.o.Rules = book
	rs, _ := book.Current()
	if all := rs.All(); len(all) != 1 || all[0].Grant == nil || !slices.Equal(all[0].Grant.Write, []string{f.a}) {
		t.Fatalf("reloaded rules %+v", all)
	}
	res, _ = g.run(t, sandbox.Grant{}, "touch", f.a+"/first")
	if !res.Ran || res.Asked || res.Escalated || !slices.Equal(res.Grant.Write, []string{f.a}) || res.Evaluation.BypassSandbox {
		t.Fatalf("rule with grant: %+v %+v", res, res.Evaluation)
	}
	// Still sandboxed: the same rule cannot write B.
	res, _ = g.run(t, sandbox.Grant{}, "touch", f.b+"/x")
	if exists(filepath.Join(f.b, "x")) || res.Escalated {
		t.Errorf("a rule with a grant for A let the command write B: %+v", res)
	}
}

// TestGrantRefusedUnderNever: under never nobody can approve a grant; the
// twin without a grant still runs.
func TestGrantRefusedUnderNever(t *testing.T) {
	f := newGrantOrch(t, Never)
	res, _ := f.run(t, sandbox.Grant{Write: []string{f.a}}, "touch", f.a+"/never")
	if res.Ran || res.Evaluation.Decision != rules.Forbidden || exists(filepath.Join(f.a, "never")) {
		t.Fatalf("under never: %+v", res)
	}
	res, _ = f.run(t, sandbox.Grant{Read: []string{f.secret}}, "cat", f.secret)
	if res.Ran || res.Evaluation.Decision != rules.Forbidden {
		t.Fatalf("read grant under never: %+v", res)
	}
	if res, _ := f.run(t, sandbox.Grant{}, "touch", f.ws+"/twin"); !res.Ran || !exists(filepath.Join(f.ws, "twin")) {
		t.Errorf("twin: %+v", res)
	}
	// Network grants need the proxy: with the network off they are refused
	// whatever the policy.
	res, _ = f.run(t, sandbox.Grant{Network: []string{"pypi.org:443"}}, "true")
	if res.Ran || !strings.Contains(res.Refused, `network grants need network_access = "ask"`) {
		t.Errorf("network grant: %+v", res)
	}
}

// TestGrantReadOfOneSecret: a read grant for one file of ~/.ssh is high
// risk (Deny first, nothing remembered); approved, that file is readable
// and its sibling is not.
func TestGrantReadOfOneSecret(t *testing.T) {
	f := newGrantOrch(t, OnRequest, Approved, Approved)
	res, out := f.run(t, sandbox.Grant{Read: []string{"~/.ssh/id_deploy"}}, "cat", f.secret)
	p := f.user.prompts()
	if len(p) != 1 || p[0].Risk.Level != risk.High || p[0].Actions()[0].Title != TitleDeny || p[0].AllowSession {
		t.Fatalf("read of a secret: prompts %+v", p)
	}
	if !strings.Contains(p[0].Message(), "read access to ~/.ssh/id_deploy") {
		t.Errorf("message:\n%s", p[0].Message())
	}
	if !res.Ran || !strings.Contains(out, "SECRET-id_deploy") {
		t.Fatalf("granted read: %+v %q", res, out)
	}
	_, out = f.run(t, sandbox.Grant{Read: []string{"~/.ssh/id_deploy"}}, "cat", filepath.Join(f.home, ".ssh", "id_other"))
	if strings.Contains(out, "SECRET-id_other") {
		t.Errorf("a grant for id_deploy exposed id_other: %q", out)
	}
}

// TestGrantRetryAfterBlockedWrite: the retry dialog offers write access to
// the blocked directory first and running without the sandbox as a
// separate action; Allow once retries sandboxed with the grant.
func TestGrantRetryAfterBlockedWrite(t *testing.T) {
	f := newGrantOrch(t, OnFailure, Approved)
	res, _ := f.run(t, sandbox.Grant{}, f.script(t, "build.sh", `touch "`+f.a+`/retried"`))
	p := f.user.prompts()
	if len(p) != 1 || p[0].Kind != PromptRetry || !p[0].Sandboxed || !slices.Equal(p[0].Added.Write, []string{f.a}) {
		t.Fatalf("prompts %+v", p)
	}
	var titles []string
	for _, a := range p[0].Actions() {
		titles = append(titles, a.Title)
	}
	want := []string{TitleAllowOnce, TitleAllowSession, TitleRunUnsandboxed, TitleDeny, TitleDenyAndStop}
	if !slices.Equal(titles, want) {
		t.Errorf("titles %q, want %q", titles, want)
	}
	if !strings.Contains(p[0].Message(), "Retry it in the sandbox with write access to "+f.a+"?") {
		t.Errorf("message:\n%s", p[0].Message())
	}
	if !res.Ran || res.Escalated || !exists(filepath.Join(f.a, "retried")) || !slices.Equal(res.Grant.Write, []string{f.a}) {
		t.Fatalf("outcome %+v", res)
	}

	// The separate choice runs it with no sandbox.
	f = newGrantOrch(t, OnFailure, ApprovedUnsandboxed)
	if res, _ := f.run(t, sandbox.Grant{}, f.script(t, "build.sh", `touch "`+f.a+`/free"`)); !res.Escalated || !exists(filepath.Join(f.a, "free")) {
		t.Errorf("run without sandbox: %+v", res)
	}

	// A high-risk retry (write to the home directory) puts Deny first.
	f = newGrantOrch(t, OnFailure, Denied)
	if err := os.WriteFile(filepath.Join(f.home, ".profile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, sandbox.Grant{}, f.script(t, "build.sh", `touch "`+f.home+`/new-file"`))
	p = f.user.prompts()
	if len(p) != 1 || p[0].Actions()[0].Title != TitleDeny || p[0].Risk.Level != risk.High {
		t.Fatalf("high-risk retry: %+v", p)
	}
	if exists(filepath.Join(f.home, "new-file")) {
		t.Error("denied retry wrote")
	}

	// on-request offers no retry, but tells the model what to ask for.
	f = newGrantOrch(t, OnRequest)
	res, _ = f.run(t, sandbox.Grant{}, f.script(t, "build.sh", `touch "`+f.a+`/x"`))
	if res.Asked || !strings.Contains(res.Refused, `additional_permissions {"write":["`+f.a+`"]}`) {
		t.Errorf("on-request: %+v", res)
	}
}

// TestGrantRetryAfterDeniedRead: a read the read policy hid is retried
// with read access to exactly that path.
func TestGrantRetryAfterDeniedRead(t *testing.T) {
	f := newGrantOrch(t, OnFailure, Approved)
	res, out := f.run(t, sandbox.Grant{}, f.script(t, "show.sh", `cat "`+f.secret+`"`))
	p := f.user.prompts()
	if len(p) != 1 || p[0].Kind != PromptRetry || !slices.Equal(p[0].Added.Read, []string{f.secret}) {
		t.Fatalf("prompts %+v (output %q)", p, out)
	}
	if p[0].Actions()[0].Title != TitleDeny {
		t.Errorf("reading a secret is high risk: Deny first, got %+v", p[0].Actions())
	}
	if !res.Ran || res.Escalated || !strings.Contains(out, "SECRET-id_deploy") {
		t.Fatalf("outcome %+v %q", res, out)
	}
}

// TestGrantRuleLinkSwapNotFollowed: a saved rule's grant for a directory
// that later became a link is not applied (the link is not followed); the
// twin rule on a real directory still applies.
func TestGrantRuleLinkSwapNotFollowed(t *testing.T) {
	f := newGrantOrch(t, OnRequest)
	l := filepath.Join(filepath.Dir(f.a), "L")
	if err := os.MkdirAll(l, 0o755); err != nil {
		t.Fatal(err)
	}
	ruleSet := `prefix_rule(pattern=["touch"], decision="allow", additional_permissions={"write": ["` + l + `"]})` + "\n" +
		`prefix_rule(pattern=["mkdir"], decision="allow", additional_permissions={"write": ["` + f.a + `"]})` + "\n"
	os.MkdirAll(f.rules, 0o755)
	if err := os.WriteFile(filepath.Join(f.rules, "grants.rules"), []byte(ruleSet), 0o644); err != nil {
		t.Fatal(err)
	}
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: f.rules}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.o.Rules = book
	if err := os.Remove(l); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.b, l); err != nil {
		t.Fatal(err)
	}
	res, _ := f.run(t, sandbox.Grant{}, "touch", l+"/via-link")
	if exists(filepath.Join(f.b, "via-link")) || !res.Evaluation.Grant.IsZero() {
		t.Errorf("a rule grant followed a swapped link: %+v %+v", res, res.Evaluation)
	}
	if res, _ := f.run(t, sandbox.Grant{}, "mkdir", f.a+"/twin"); !res.Ran || !exists(filepath.Join(f.a, "twin")) {
		t.Errorf("twin rule on a real directory: %+v %+v", res, res.Evaluation)
	}
}

// TestGrantRulesLoader: additional_permissions is read on allow rules only,
// with absolute or ~/ paths and known keys.
func TestGrantRulesLoader(t *testing.T) {
	ok := `prefix_rule(pattern=["pip", "install"], additional_permissions={"write": ["~/.cache/pip"], "read": ["/opt/data"]})`
	p, err := rules.ParseRules("t.rules", []byte(ok))
	if err != nil || p.Rules[0].Grant == nil || !slices.Equal(p.Rules[0].Grant.Write, []string{"~/.cache/pip"}) || !slices.Equal(p.Rules[0].Grant.Read, []string{"/opt/data"}) {
		t.Fatalf("%+v %v", p, err)
	}
	for src, want := range map[string]string{
		`prefix_rule(pattern=["rm"], decision="forbidden", additional_permissions={"write": ["/x"]})`: "only for allow rules",
		`prefix_rule(pattern=["pip"], additional_permissions={"write": ["rel/dir"]})`:                 "must be an absolute path",
		`prefix_rule(pattern=["pip"], additional_permissions={"exec": ["/x"]})`:                       "unknown key",
		`prefix_rule(pattern=["pip"], additional_permissions={})`:                                     "is empty",
		`prefix_rule(pattern=["pip"], additional_permissions={"write": "/x"})`:                        "must be a list",
	} {
		if _, err := rules.ParseRules("t.rules", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// What Always allow writes loads back with its grant.
	line := rules.GrantRuleLine([]string{"touch", "a b"}, sandbox.Grant{Write: []string{"/w"}, Read: []string{"/r\"q"}})
	p, err = rules.ParseRules("t.rules", []byte(line))
	if err != nil || !slices.Equal(p.Rules[0].Grant.Read, []string{"/r\"q"}) {
		t.Errorf("%s: %+v %v", line, p, err)
	}
}

// lastingDir makes a directory with a plain name (no temporary directory,
// no random part) in the package's directory, for a test of "Always allow",
// which is never offered for a one-off path.
func lastingDir(t *testing.T) string {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	name := []byte(".warden-always-allow-")
	for _, d := range strconv.Itoa(os.Getpid()) {
		name = append(name, byte('a'+d-'0'))
	}
	dir := filepath.Join(here, string(name))
	if oneOffWord(dir) {
		t.Skipf("the checkout %s is in a temporary directory: no path here lasts for Always allow", here)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
