package approvals

import (
	"context"
	"github.com/wardenhq/warden/approvals/risk"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session approval is keyed on the resolved working directory: approved
// through a link, it does not follow the link when the link is pointed
// elsewhere; pointed outside the workspace, the request is high risk and
// asked again whatever was remembered.
func TestBoundarySessionApprovalKeysOnTheResolvedDir(t *testing.T) {
	f := newOrch(t, Untrusted, ApprovedForSession, Denied, Denied)
	a, b := filepath.Join(f.ws, "a"), filepath.Join(f.ws, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	outside := t.TempDir() // under /tmp, but not a writable root of this sandbox
	link := filepath.Join(f.ws, "link")
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}
	exec := func() *ExecOutcome {
		t.Helper()
		res, err := f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"touch", "x"}, Cwd: link, Sandbox: sb}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	point := func(to string) {
		os.Remove(link)
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	point(a)
	if res := exec(); !res.Ran || !res.Asked {
		t.Fatalf("first request: %+v", res)
	}
	if p := f.user.prompts()[0]; p.Cwd != a {
		t.Errorf("the prompt shows %s, want the resolved %s", p.Cwd, a)
	}
	if res := exec(); !res.Ran || res.Asked {
		t.Errorf("the remembered request was asked again: %+v", res)
	}
	point(b)
	if res := exec(); res.Ran || !res.Asked {
		t.Errorf("the session approval for %s followed the link to %s: %+v", a, b, res)
	}
	point(outside)
	res := exec()
	if res.Ran || !res.Asked || res.Evaluation.Risk.Level != risk.High || !strings.Contains(res.Refused, "outside the workspace") {
		t.Errorf("outside the workspace: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("written outside")
	}
}

// An allow rule spares the dialog only where the user put the session: in
// a directory outside the workspace the command is asked about and,
// approved, runs sandboxed. The twin inside runs unasked, sandboxed too.
func TestBoundaryRuleDoesNotFollowAnOutsideWorkdir(t *testing.T) {
	f := newOrch(t, OnRequest, Approved)
	os.MkdirAll(f.rules, 0o755)
	if err := os.WriteFile(filepath.Join(f.rules, "t.rules"), []byte(`prefix_rule(pattern=["touch"], decision="allow")`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.o.Rules.Reload(); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{f.ws}, WritableRoots: []string{f.ws}}
	res, err := f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"touch", "x"}, Cwd: outside, Sandbox: sb, RequestEscalation: true, Justification: "j"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Asked || !res.Ran || res.Escalated || res.Evaluation.BypassSandbox {
		t.Errorf("outside: asked %v ran %v escalated %v bypass %v", res.Asked, res.Ran, res.Escalated, res.Evaluation.BypassSandbox)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("the approved command wrote outside the workspace: it left the sandbox")
	}
	res, err = f.o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"touch", "x"}, Cwd: f.ws, Sandbox: sb}})
	if err != nil || res.Asked || !res.Ran || res.Escalated {
		t.Errorf("the twin inside: %+v %v", res, err)
	}
}
