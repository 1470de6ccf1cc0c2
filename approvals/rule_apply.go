package approvals

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// An allow rule means "run without asking, in the sandbox", with the
// rule's grant if it carries one: it never takes a command out of the
// sandbox. A rule is applied only where that meaning holds:
//
//   - its rules file lies outside every writable root, or in a protected
//     part of one (a sandboxed command could otherwise write itself an
//     allow rule, or a grant);
//   - a rule with a grant lets only what the user's rule names run with the
//     grant: plain words running programs found outside the writable roots,
//     with no shell start-up file inside one (see plainwords.go). A
//     program the sandbox could have rewritten would carry the grant.
//
// A rule not applied is reported with why, and the command is judged as if
// no rule had matched. "Always allow" is offered only when the rule it saves
// would be applied by these same checks.

// lazyPlain runs the plain-words check of one command line at most once.
type lazyPlain struct {
	done bool
	why  string
}

func (l *lazyPlain) blocker(ev *Evaluator, req CommandRequest, a *command.Analysis) string {
	if !l.done {
		l.why, l.done = plainCheckFor(req, ev.runEnv()).GrantBlocker(a), true
	}
	return l.why
}

// allowRuleBlocker says why the allow rules that matched one command of
// the line are not applied, or "" when they are.
func (ev *Evaluator) allowRuleBlocker(req CommandRequest, a *command.Analysis, matches []*rules.Rule, plain *lazyPlain) string {
	for _, r := range matches {
		if why := ruleFileBlocker(r.File, req.Sandbox); why != "" {
			return fmt.Sprintf("rule %s: %s", r.Source, why)
		}
	}
	for _, r := range matches {
		if r.Grant == nil || !req.Sandbox.Restricted() {
			continue
		}
		if why := plain.blocker(ev, req, a); why != "" {
			return fmt.Sprintf("rule %s carries additional permissions, and %s", r.Source, why)
		}
	}
	return ""
}

// amendmentBlocker says why an "Always allow" rule saved for this request
// (with its grant, when it has one) would not be applied next time, or ""
// when it would.
func (ev *Evaluator) amendmentBlocker(req CommandRequest, a *command.Analysis, withGrant bool, plain *lazyPlain) string {
	if !req.Sandbox.Restricted() {
		return "with no sandbox (danger-full-access) the saved rule would run it unsandboxed"
	}
	if ev.RulesDir != "" {
		if why := ruleFileBlocker(filepath.Join(ev.RulesDir, rules.DefaultRulesFile), req.Sandbox); why != "" {
			return why
		}
	}
	if withGrant && req.Sandbox.Restricted() {
		if why := plain.blocker(ev, req, a); why != "" {
			return "the rule would carry additional permissions, and " + why
		}
	}
	return ""
}

// ruleFileBlocker says why a rule from file must not be applied: the file
// lies in a writable root, outside what the sandbox holds read-only there
// (Policy.HeldBy, the answer the patch guard gives too), so a sandboxed
// command could have written the rule. "" when it is safe (or the rule was
// not read from a file). Most rules files lie outside every root: only for
// one inside a root is what the sandbox holds worked out.
func ruleFileBlocker(file string, sb Sandbox) string {
	if file == "" || !sb.Restricted() || sb.Mode == ReadOnly {
		return ""
	}
	clean := filepath.Clean(file)
	var held func(string) string
	for _, p := range []string{clean, (*pathmemo.Memo)(nil).ResolveExisting(clean)} {
		root := ""
		for _, r := range sb.WritableRoots {
			if risk.Within(r, p) {
				root = r
				break
			}
		}
		if root == "" {
			continue
		}
		if held == nil {
			held = sb.heldBy("")
		}
		if held(p) == "" {
			return fmt.Sprintf("its rules file %s lies in the writable root %s, where sandboxed commands can rewrite it", file, root)
		}
	}
	return ""
}

// NetworkRulesFor is rs with the network allow rules that sb's sandboxed
// commands could have written (ruleFileBlocker) taken out, and why each
// was: a network_rule from such a file may still ask or forbid, never
// allow.
func NetworkRulesFor(rs *rules.RuleSet, sb Sandbox) (*rules.RuleSet, []string) {
	if rs == nil {
		return nil, nil
	}
	var kept []rules.NetworkRule
	var notes []string
	for i, r := range rs.Network {
		why := ""
		if r.Decision == rules.Allow {
			why = ruleFileBlocker(r.File, sb)
		}
		if why == "" {
			if kept != nil {
				kept = append(kept, r)
			}
			continue
		}
		if kept == nil {
			kept = append(make([]rules.NetworkRule, 0, len(rs.Network)), rs.Network[:i]...)
		}
		notes = append(notes, fmt.Sprintf("network_rule at %s not applied: %s", r.Source, why))
	}
	if notes == nil {
		return rs, nil
	}
	n := rs.With(nil)
	n.Network = kept
	return n, notes
}

// EvaluateNetworkIn is EvaluateNetwork for a command sandboxed by sb: the
// network allow rules sb lets it rewrite are not applied, and when one of
// them would have allowed dest the reason names it and says why.
func EvaluateNetworkIn(ruleSet *rules.RuleSet, policy Policy, dest netproxy.Destination, sb Sandbox) NetworkEvaluation {
	trusted, notes := NetworkRulesFor(ruleSet, sb)
	ev := EvaluateNetwork(trusted, policy, dest)
	if len(notes) == 0 || ev.Decision == rules.Allow {
		return ev
	}
	if all := EvaluateNetwork(ruleSet, policy, dest); all.Decision == rules.Allow && all.Rule != nil {
		ev.Reason += fmt.Sprintf("; network_rule at %s not applied: %s", all.Rule.Source, ruleFileBlocker(all.Rule.File, sb))
	}
	return ev
}

// RuleNote is an allow rule that is not applied, and why.
type RuleNote struct {
	Source string `json:"source"`
	Rule   string `json:"rule"`
	Why    string `json:"why"`
}

// RulesNotApplied lists the allow rules of rs that a command under sb would
// not be given, by the same checks Evaluate and the network proxy make:
// rules from a file inside a writable root, and rules with a grant whose
// program is found inside one (or by a relative path). env is the
// environment commands start with (its PATH finds the programs).
func RulesNotApplied(rs *rules.RuleSet, sb Sandbox, cwd string, env []string) []RuleNote {
	var out []RuleNote
	check := plainCheckFor(CommandRequest{Cwd: cwd, Sandbox: sb}, env)
	for _, r := range rs.All() {
		if r.Decision != rules.Allow {
			continue
		}
		why := ruleFileBlocker(r.File, sb)
		if why == "" && r.Grant != nil && sb.Restricted() {
			if w := check.Program(r.Pattern[0][0]); w != "" {
				why = "it carries additional permissions, and " + w
			}
		}
		if why != "" {
			out = append(out, RuleNote{Source: r.Source, Rule: "prefix_rule " + r.PatternString(), Why: why})
		}
	}
	for _, n := range rs.NetworkRules() {
		if n.Decision != rules.Allow {
			continue
		}
		if why := ruleFileBlocker(n.File, sb); why != "" {
			out = append(out, RuleNote{Source: n.Source, Rule: fmt.Sprintf("network_rule %s (%s)", n.Host, n.Protocol), Why: why})
		}
	}
	return out
}

// plainCheckFor is the plain-words check for a request: its programs must
// come from outside the workdir and every root its sandbox lets it write.
func plainCheckFor(req CommandRequest, env []string) *command.PlainCheck {
	roots := append([]string{req.Cwd}, req.Sandbox.WritableRoots...)
	if req.Sandbox.Mode == WorkspaceWrite || req.Sandbox.Mode == "" {
		// The sandbox's own temporary roots (see sandbox.Policy.Roots).
		roots = append(roots, "/tmp", command.EnvValue(env, "TMPDIR"), os.TempDir())
	}
	return command.NewPlainCheck(roots, env)
}
