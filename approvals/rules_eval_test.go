package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"strings"
	"testing"
)

func TestRuleBookKeepsLastGoodRules(t *testing.T) {
	dir := t.TempDir()
	p := writeRules(t, dir, "a.rules", `prefix_rule(pattern=["make"], decision="forbidden")`)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(`prefix_rule(pattern=["make"], decision="forbiden")`), 0o644)
	if err := book.Reload(); err == nil || !strings.Contains(err.Error(), "a.rules:1") {
		t.Fatalf("reload of a broken file: err = %v", err)
	}
	rs, cerr := book.Current()
	if cerr != nil || len(rs.Match([]string{"make"})) != 1 {
		t.Errorf("last good rules lost after a broken edit (err %v)", cerr)
	}
	if book.LastError() == nil {
		t.Error("LastError does not report the broken edit")
	}
	// A book that never loaded falls back to prompting for everything not known-safe.
	bad := t.TempDir()
	writeRules(t, bad, "x.rules", "prefix_rule(")
	book2, err := rules.NewRuleBook([]rules.RuleSource{{Dir: bad}}, nil)
	if err == nil {
		t.Fatal("broken rules loaded without error")
	}
	o := &Orchestrator{Policy: Policy{Ask: OnRequest}, Rules: book2}
	e := o.Evaluator().Evaluate(CommandRequest{Argv: []string{"make"}, Cwd: bad, Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if e.Decision != rules.Prompt || !strings.Contains(e.Reason, "failed to load") {
		t.Errorf("with broken rules: %s %q, want prompt", e.Decision, e.Reason)
	}
	e = o.Evaluator().Evaluate(CommandRequest{Argv: []string{"ls"}, Cwd: bad, Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if e.Decision != rules.Allow {
		t.Errorf("known-safe ls with broken rules: %s", e.Decision)
	}
}

func TestStrictestRuleWins(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, "a.rules", `prefix_rule(pattern=["git"], decision="allow")`)
	writeRules(t, dir, "b.rules", `prefix_rule(pattern=["git", "push"], decision="forbidden", justification="no pushing from the agent")`)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &Orchestrator{Policy: Policy{Ask: OnRequest}, Rules: book}
	e := o.Evaluator().Evaluate(CommandRequest{Argv: []string{"git", "push"}, Cwd: dir, Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if e.Decision != rules.Forbidden || !strings.Contains(e.Reason, "no pushing from the agent") || !strings.Contains(e.Reason, "b.rules:1") {
		t.Errorf("decision %s reason %q", e.Decision, e.Reason)
	}
	if len(e.MatchedRules) != 2 {
		t.Errorf("matched %d rules, want both", len(e.MatchedRules))
	}
}
