package approvals

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox"
)

// A write grant's dialog says once what stays read-only inside the granted
// directory, on the sandbox line: not in the heading, the reason or the
// risk facts, which keep the fact that raises the risk (other projects
// inside). Twin: a directory holding nothing lists nothing and stays
// medium risk.
func TestGrantDialogSaysWhatStaysHeldOnce(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newGrantOrch(t, OnRequest, Denied, Denied)
	for _, repo := range []string{"a", "b"} {
		if out, err := exec.Command("git", "init", "-q", filepath.Join(f.a, repo)).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(f.a, "b", ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.run(t, sandbox.Grant{Write: []string{f.a}}, "touch", f.a+"/f")
	f.run(t, sandbox.Grant{Write: []string{f.b}}, "touch", f.b+"/f")
	p := f.user.prompts()
	if len(p) != 2 {
		t.Fatalf("%d prompts", len(p))
	}
	msg := p[0].Message()
	const held = "stays read-only inside: 2 repositories (a/.git, b/.git), .vscode in b"
	if n := strings.Count(msg, "stays read-only inside"); n != 1 {
		t.Errorf("what stays held is said %d times, want once:\n%s", n, msg)
	}
	sandboxLine := ""
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "Sandbox: ") {
			sandboxLine = l
		}
	}
	if !strings.Contains(sandboxLine, "plus write access to "+f.a+" ("+held+"), nothing else") {
		t.Errorf("sandbox line %q does not say what stays held", sandboxLine)
	}
	if !strings.Contains(msg, "Risk: high") || !strings.Contains(msg, "which holds other projects (a, b): their other files become writable") {
		t.Errorf("the risk of other projects is not said:\n%s", msg)
	}
	twin := p[1].Message()
	if strings.Contains(twin, "read-only inside") || !strings.Contains(twin, "Risk: medium") {
		t.Errorf("twin: a plain directory's grant:\n%s", twin)
	}
}
