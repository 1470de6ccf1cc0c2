package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecisionAllowRule is the decision for a command an allow rule
// covers, in a workspace-write sandbox: the cost of checking that the rule
// may be applied (its rules file outside the writable roots) on the path
// every rule-allowed command takes.
func BenchmarkDecisionAllowRule(b *testing.B) {
	ws := b.TempDir()
	dir := filepath.Join(ws, "..", filepath.Base(ws)+"-rules")
	os.MkdirAll(dir, 0o755)
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "r.rules"), []byte(`prefix_rule(pattern=["cargo", "test"], decision="allow")`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ruleSet, err := rules.LoadRules([]rules.RuleSource{{Dir: dir}})
	if err != nil {
		b.Fatal(err)
	}
	ev := &Evaluator{Policy: Policy{Ask: Untrusted}, Rules: ruleSet}
	req := CommandRequest{Argv: []string{"cargo", "test"}, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}}
	b.ReportAllocs()
	for b.Loop() {
		if e := ev.Evaluate(req); e.Decision != rules.Allow {
			b.Fatal(e.Decision, e.Reason)
		}
	}
}
