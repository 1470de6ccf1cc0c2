package approvals

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/sandbox"
)

// CommandRequest is one command the agent (or the user, through `warden
// exec`) wants to run.
type CommandRequest struct {
	Argv    []string
	Cwd     string // absolute
	Sandbox Sandbox
	// RequestEscalation is the model's sandbox_permissions=require_escalated:
	// it asks to run outside the sandbox.
	RequestEscalation bool
	// Justification is the agent's reason, shown in the prompt.
	Justification string
	// PrefixRule is the model's proposed "Always allow" prefix, used as the
	// amendment when acceptable.
	PrefixRule []string
	// Grant is the model's additional permissions (sandbox_permissions =
	// with_additional_permissions), paths as it wrote them: relative ones
	// are taken from Cwd. See grant.go.
	Grant sandbox.Grant
}

// MatchedRule is a rule that matched one command of the request.
type MatchedRule struct {
	Pattern       string         `json:"pattern"`
	Decision      rules.Decision `json:"decision"`
	Justification string         `json:"justification"`
	Source        string         `json:"source"`
}

// Evaluation is the requirement for one command: whether it runs, needs the
// user, or is refused, and everything that decision rests on.
type Evaluation struct {
	Decision rules.Decision `json:"decision"`
	// BypassSandbox is always false: an allow rule means "run without
	// asking, in the sandbox" (Codex's rules take the command out of it;
	// Warden's never do). Kept for the policy check's JSON contract.
	BypassSandbox bool          `json:"bypass_sandbox"`
	KnownSafe     bool          `json:"known_safe"`
	Dangerous     bool          `json:"dangerous"`
	MatchedRules  []MatchedRule `json:"matched_rules"`
	// Amendment is the argv prefix offered for "Always allow", or nil.
	Amendment []string  `json:"amendment"`
	Reason    string    `json:"reason"`
	Risk      risk.Risk `json:"risk"`
	// RunArgv is what Warden runs when it differs from the request: git
	// status, log, diff, show and branch with the programs a repository's
	// config could start disabled (see safety_git.go). Nil: the request.
	RunArgv []string `json:"run_argv,omitempty"`
	// Escalate: the request runs outside the sandbox once approved.
	Escalate bool `json:"-"`
	// Grant is what the run may do beyond the sandbox, resolved: the
	// request's additional permissions and the grants of the allow rules
	// that matched. It is only ever given inside the sandbox.
	Grant sandbox.Grant `json:"grant"`
	// GrantAsked: the request's grant is not covered by a rule, so it
	// needs the user.
	GrantAsked bool `json:"grant_asked,omitempty"`

	Analysis *command.Analysis `json:"-"`
	category promptCategory    // what kind of prompt this is, for granular
	// gitUnsafe: the line's git commands cannot be hardened or use a
	// repository whose config a sandboxed command could have written, so
	// none of them is known-safe.
	gitUnsafe bool
}

// segmentSafe: one command of the line is known-safe (its git hardened).
func (e *Evaluation) segmentSafe(s command.Segment) bool {
	return safe.SegmentKnownSafe(s) && !(e.gitUnsafe && safe.IsGitSegment(s))
}

// OffersSessionApproval reports whether "Allow for session" may be offered:
// never for high-risk commands.
func (e *Evaluation) OffersSessionApproval() bool { return e.Risk.Level < risk.High }

// Evaluator turns a request into an Evaluation under a policy and rules.
type Evaluator struct {
	Policy Policy
	Rules  *rules.RuleSet
	// RulesErr is set when the rules failed to load and no earlier good set
	// exists: anything not known-safe then needs the user.
	RulesErr error
	// RunEnv returns the environment a command starts with (its PATH finds
	// the programs a rule with a grant runs); nil means this process's
	// environment.
	RunEnv func() []string
	// RulesDir is where "Always allow" saves rules: one is offered only
	// when the rule saved there would be applied ("" : not checked).
	RulesDir string
	// RecordsChanges: what commands change in the workspace is recorded
	// for undo (the Runner has a ChangeLog), which the risk facts say.
	RecordsChanges bool
}

// Evaluate decides the requirement for req. It is pure apart from reading
// the filesystem for risk facts.
func (ev *Evaluator) Evaluate(req CommandRequest) *Evaluation {
	a := command.Analyze(req.Argv)
	e := &Evaluation{Analysis: a, MatchedRules: []MatchedRule{}}
	asked, grantErr := resolveAsked(req)
	// Writes inside the asked grant are judged as the sandbox will see
	// them once it is given; the grant's own risk is added to the facts.
	rctx := risk.Context{Cwd: req.Cwd, Sandbox: req.Sandbox.withWrites(asked.Write).withWrites(ev.ruleWrites(req, a)).Policy()}
	if ev.RecordsChanges {
		rctx.Recorded = req.Sandbox.Workspace
	}
	e.Risk = risk.Assess(a, rctx)
	if !asked.IsZero() {
		addGrantRisk(&e.Risk, req.Sandbox.Policy(), asked, req.Cwd)
	}
	run, hardened := safe.HardenGit(a)
	e.gitUnsafe = !hardened || (run != nil && !gitfacts.StaysProtected(a, req.Cwd, req.Sandbox.Policy()))
	// A read of credentials is never known-safe, whatever reads them.
	e.KnownSafe = a.Understood() && !e.Risk.ReadsSecrets
	for _, s := range a.Segments {
		e.KnownSafe = e.KnownSafe && e.segmentSafe(s)
	}
	cmd := command.Display(req.Argv)
	pol := ev.Policy.Ask
	// Dangerous: some command is on the dangerous list and not a deletion
	// the sandbox confines (confinedDelete).
	for _, s := range a.Segments {
		e.Dangerous = e.Dangerous || (safe.IsDangerousArgv(s.Argv) && !confinedDelete(s, req, e, pol))
	}
	if grantErr != nil {
		e.Decision = rules.Forbidden
		e.Reason = fmt.Sprintf("`%s` refused: %v", cmd, grantErr)
		return e
	}
	var allowMatched []*rules.Rule // the allow rules that let segments run

	// Per command: rules first, heuristics for what no rule covers.
	decision := rules.Allow
	allRuleAllowed := len(a.Segments) > 0
	var promptSeg []command.Segment // commands the heuristics would ask about
	var ruleReason string
	rulePrompt := false
	// setAside says why an allow rule is not applied (rule_apply.go).
	setAside, ruleIgnored := "", false
	var plain lazyPlain
	for _, seg := range a.Segments {
		matches := ev.Rules.Match(seg.Argv)
		if allowsOnly(matches) {
			if why := ev.allowRuleBlocker(req, a, matches, &plain); why != "" {
				setAside = why
				// Judged as if no rule matched, but still reported.
				for _, r := range matches {
					e.MatchedRules = append(e.MatchedRules, MatchedRule{Pattern: r.PatternString(), Decision: r.Decision, Justification: r.Justification, Source: r.Source})
				}
				matches, ruleIgnored = nil, true
			}
		}
		if len(matches) == 0 {
			allRuleAllowed = false
			d := ev.heuristics(seg, req, e)
			if d == rules.Prompt {
				promptSeg = append(promptSeg, seg)
			}
			decision = max(decision, d)
			continue
		}
		strictest := rules.Allow
		var worst *rules.Rule
		for _, r := range matches {
			e.MatchedRules = append(e.MatchedRules, MatchedRule{Pattern: r.PatternString(), Decision: r.Decision, Justification: r.Justification, Source: r.Source})
			if worst == nil || r.Decision > strictest {
				strictest, worst = r.Decision, r
			}
		}
		if strictest != rules.Allow {
			allRuleAllowed = false
		} else {
			allowMatched = append(allowMatched, matches...)
		}
		if strictest > decision || (strictest == decision && ruleReason == "" && strictest != rules.Allow) {
			ruleReason = ruleMessage(cmd, strictest, worst)
		}
		if strictest == rules.Prompt {
			rulePrompt = true
		}
		decision = max(decision, strictest)
	}

	switch {
	case decision == rules.Forbidden:
		e.Decision = rules.Forbidden
		if ruleReason != "" {
			e.Reason = ruleReason
		} else {
			e.Reason = fmt.Sprintf("`%s` rejected: it may destroy data (rm -f) and the approval policy is never, so nobody can be asked", cmd)
		}
		return e
	case len(a.Problems) > 0 && !e.KnownSafe && (len(a.Segments) == 0 || unreadable(a)):
		// Parse errors, oversized or non-UTF-8 command lines: what would run
		// is unknown, so ask (fail closed), whatever the policy.
		decision = rules.Prompt
		e.Reason = fmt.Sprintf("`%s` needs approval: Warden could not analyse it (%s)", cmd, a.Problems[0])
	case ev.RulesErr != nil && !e.KnownSafe:
		decision = rules.Prompt
		e.Reason = fmt.Sprintf("`%s` needs approval: the exec-policy rules failed to load (%v)", cmd, ev.RulesErr)
	case decision == rules.Prompt && rulePrompt:
		e.Reason = ruleReason
		e.category = categoryRules
	case decision == rules.Prompt:
		e.Reason = ev.heuristicReason(cmd, req, e)
	case decision == rules.Allow && e.Risk.ReadsSecrets:
		// Credentials leave no trace when read and the sandbox may not hide
		// them (read_access = full, a .env in the workspace): always ask,
		// and refuse under never, where nobody can be asked.
		decision = rules.Prompt
		promptSeg = nil
		e.Reason = fmt.Sprintf("`%s` needs approval: high risk: %s", cmd, e.Risk.Summary)
	case decision == rules.Allow && e.Risk.Level == risk.High && (pol != Never || !e.Risk.SandboxStops):
		// Risk changes decisions: a high-risk command is put to the user even
		// when a rule or the policy would have let it run. Under never,
		// where nobody can be asked, it runs sandboxed when the sandbox
		// stops every high-risk effect (a write outside the roots, sudo, the
		// network when off), and is refused otherwise.
		decision = rules.Prompt
		promptSeg = nil
		e.Reason = fmt.Sprintf("`%s` needs approval: high risk: %s", cmd, e.Risk.Summary)
	case decision == rules.Allow && allRuleAllowed && ev.leavesByRequest(req, e):
		// The rule lets it run in the sandbox without asking; leaving the
		// sandbox takes the user, as for any command.
		decision = rules.Prompt
		e.category = categoryEscalation
		e.Reason = fmt.Sprintf("`%s` is allowed by rule %s in the sandbox, and asks to run outside it (%s risk)", cmd, e.MatchedRules[0].Source, e.Risk.Level)
	case decision == rules.Allow:
		switch {
		case allRuleAllowed && req.Sandbox.Restricted():
			e.Reason = fmt.Sprintf("`%s` is allowed by rule %s, in the sandbox", cmd, e.MatchedRules[0].Source)
		case allRuleAllowed:
			e.Reason = fmt.Sprintf("`%s` is allowed by rule %s (no sandbox: danger-full-access)", cmd, e.MatchedRules[0].Source)
		case e.KnownSafe:
			e.Reason = fmt.Sprintf("`%s` is known to be safe", cmd)
		case !req.Sandbox.Restricted():
			e.Reason = fmt.Sprintf("`%s` is allowed by the %s policy (no sandbox: danger-full-access)", cmd, pol)
		default:
			e.Reason = fmt.Sprintf("`%s` runs in the sandbox (%s) under the %s policy", cmd, req.Sandbox.Describe(), pol)
		}
	}

	if ruleIgnored {
		e.Reason += "; allow rule not applied: " + setAside
	}
	applyGrants(req, e, asked, allRuleAllowed && decision == rules.Allow, allowMatched)
	if e.GrantAsked {
		what := req.Sandbox.DescribeGrant(asked)
		if decision == rules.Allow {
			decision = rules.Prompt
			e.category = categoryEscalation
			e.Reason = fmt.Sprintf("`%s` asks to run in the sandbox with %s", cmd, what)
		} else {
			e.Reason += "; it asks for " + what
		}
		// A remembered rule carries the grant to the whole command line:
		// offer one only for a single command.
		promptSeg = nil
		if len(a.Segments) == 1 {
			promptSeg = a.Segments
		}
	}

	e.Escalate = req.RequestEscalation && req.Sandbox.Restricted()
	if decision == rules.Allow {
		e.Decision = rules.Allow
		if hardened && run != nil {
			e.RunArgv = run
			e.Reason += fmt.Sprintf("; runs as `%s` (programs from the repository's config disabled)", command.Display(run))
		}
		if e.Escalate {
			// Leaving the sandbox always takes an approval. A low-risk
			// command staying inside the writable roots does not need to
			// leave it, and under never or on-failure nobody is asked first:
			// either way it runs sandboxed, and a sandbox denial can still be
			// escalated afterwards where the policy allows.
			e.Escalate = false
			if e.Risk.Level == risk.Low {
				e.Reason += "; escalation not needed: low risk and inside the writable roots"
			} else {
				e.Reason += fmt.Sprintf("; the %s policy does not ask before running, so it runs sandboxed", pol)
			}
		}
		return e
	}

	// Needs the user, unless the policy cannot ask.
	if ev.Policy.rejects(e.category) {
		e.Decision = rules.Forbidden
		if pol == Never {
			e.Reason += " (approval required, but the approval policy is never)"
		} else {
			e.Reason += " (approval required, but the granular policy rejects this kind of prompt)"
		}
		return e
	}
	e.Decision = rules.Prompt
	if !rulePrompt && !e.Dangerous && e.Risk.Level < risk.High && a.Understood() && !e.Escalate {
		// A rule saved from a dialog to leave the sandbox would not do what
		// the user approved: it runs the command in the sandbox.
		e.Amendment = amendment(req.PrefixRule, promptSeg)
	}
	if e.Amendment != nil {
		if why := ev.amendmentBlocker(req, a, !e.Grant.IsZero(), &plain); why != "" {
			e.Amendment = nil
			e.Reason += "; \"Always allow\" is not offered: " + why
		}
	}
	return e
}

// leavesByRequest reports whether the model's request to run outside the
// sandbox needs the user although rules allow the command: under the
// policies that ask, unless the command is low risk and stays inside the
// writable roots (it then runs sandboxed, as heuristics decide).
func (ev *Evaluator) leavesByRequest(req CommandRequest, e *Evaluation) bool {
	if !req.RequestEscalation || !req.Sandbox.Restricted() || e.Risk.Level == risk.Low || ev.Policy.rejects(categoryEscalation) {
		return false
	}
	switch ev.Policy.Ask {
	case OnRequest, Granular, Untrusted:
		return true
	}
	return false
}

// allowsOnly reports whether rules matched and every one of them allows.
func allowsOnly(matches []*rules.Rule) bool {
	for _, r := range matches {
		if r.Decision != rules.Allow {
			return false
		}
	}
	return len(matches) > 0
}

func (ev *Evaluator) runEnv() []string {
	if ev.RunEnv != nil {
		return ev.RunEnv()
	}
	return os.Environ()
}

// unreadable reports problems that make the whole line unknowable, as opposed
// to a variable in one argument.
func unreadable(a *command.Analysis) bool {
	for _, p := range a.Problems {
		if strings.HasPrefix(p, "the shell cannot parse") || strings.HasPrefix(p, "the command line is") || strings.Contains(p, "not valid UTF-8") || p == "empty command" || p == command.EmptyScript {
			return true
		}
	}
	return false
}

// heuristics decides a command no rule matched (Codex's
// render_decision_for_unmatched_command, plus Warden's risk rule applied by
// the caller).
func (ev *Evaluator) heuristics(seg command.Segment, req CommandRequest, e *Evaluation) rules.Decision {
	pol := ev.Policy.Ask
	knownSafe := e.segmentSafe(seg) && len(e.Analysis.Problems) == 0 && !e.Risk.ReadsSecrets
	switch {
	case knownSafe && pol == Untrusted && unconfinedPlatform:
		// The known-safe list assumes a sandbox behind it (and Unix
		// programs): with none here, untrusted asks before every command.
		e.category = categoryUnconfined
		return rules.Prompt
	case knownSafe:
		return rules.Allow
	case safe.IsDangerousArgv(seg.Argv) && !confinedDelete(seg, req, e, pol):
		if pol == Never {
			return rules.Forbidden
		}
		return rules.Prompt
	case pol == Never || pol == OnFailure:
		return rules.Allow
	case pol == Untrusted:
		return rules.Prompt
	}
	// on-request and granular: the sandbox protects; ask only when the
	// command wants to leave it and is not low risk.
	if req.RequestEscalation && req.Sandbox.Restricted() && e.Risk.Level > risk.Low {
		e.category = categoryEscalation
		return rules.Prompt
	}
	return rules.Allow
}

// confinedDelete: an `rm -f`/`rm -rf` (or find -exec rm -rf) that the sandbox confines and the
// risk facts find routine (every path inside the writable roots, no large
// tree, not a whole root or the workspace, no repository data: anything
// else is high risk) runs sandboxed without asking where the policy trusts
// the sandbox. Under untrusted it still asks; outside a workspace-write
// sandbox, or asking to leave it, it is dangerous as ever. The targets
// must all be on the command line (not xargs input, not computed).
func confinedDelete(seg command.Segment, req CommandRequest, e *Evaluation, pol AskForApproval) bool {
	if pol == Untrusted || req.Sandbox.Mode != WorkspaceWrite || req.RequestEscalation || e.Risk.Level >= risk.High || !seg.Literal || seg.Assigns ||
		len(e.Analysis.Problems) > 0 {
		return false
	}
	u := command.UnwrapFull(seg.Argv)
	if !u.Transparent || u.Unsure || u.Appends || len(u.Privileged) > 0 || len(u.Argv) == 0 {
		return false
	}
	switch u.Argv[0] {
	case "rm":
		return len(risk.Operands(u.Argv[1:])) > 0
	case "find":
		// find -exec rm: its risk facts judged what find selects.
		for _, cmd := range safe.FindCommands(u.Argv[1:]) {
			if len(cmd) == 0 || cmd[0] != "rm" {
				return false
			}
		}
		return true
	}
	return false
}

func (ev *Evaluator) heuristicReason(cmd string, req CommandRequest, e *Evaluation) string {
	switch {
	case e.Risk.ReadsSecrets:
		return fmt.Sprintf("`%s` needs approval: high risk: %s", cmd, e.Risk.Summary)
	case e.Dangerous && e.Risk.Level == risk.High:
		return fmt.Sprintf("`%s` needs approval: it may destroy data (rm -f); high risk: %s", cmd, e.Risk.Summary)
	case e.Dangerous:
		return fmt.Sprintf("`%s` needs approval: it may destroy data (rm -f)", cmd)
	case e.category == categoryEscalation:
		return fmt.Sprintf("`%s` asks to run outside the sandbox (%s risk)", cmd, e.Risk.Level)
	case e.category == categoryUnconfined:
		return fmt.Sprintf("`%s` needs approval: Warden has no sandbox on this system, so the untrusted policy asks before every command", cmd)
	case ev.Policy.Ask == Untrusted:
		return fmt.Sprintf("`%s` needs approval: it is not known to be safe and the approval policy is untrusted", cmd)
	}
	return fmt.Sprintf("`%s` needs approval", cmd)
}

func ruleMessage(cmd string, d rules.Decision, r *rules.Rule) string {
	verb := "rejected"
	if d == rules.Prompt {
		verb = "requires approval"
	}
	if r.Justification != "" {
		return fmt.Sprintf("`%s` %s: %s (rule %s)", cmd, verb, r.Justification, r.Source)
	}
	if d == rules.Forbidden {
		return fmt.Sprintf("`%s` rejected: policy forbids commands starting with `%s` (rule %s)", cmd, patternPrefix(r), r.Source)
	}
	return fmt.Sprintf("`%s` requires approval by policy (rule %s)", cmd, r.Source)
}

func patternPrefix(r *rules.Rule) string {
	parts := make([]string, len(r.Pattern))
	for i, alts := range r.Pattern {
		parts[i] = strings.Join(alts, "|")
	}
	return strings.Join(parts, " ")
}

// amendment picks the prefix offered for "Always allow": the model's
// proposal when it is acceptable and covers every command that needs
// approval, else the first command that needs approval.
func amendment(proposed []string, prompting []command.Segment) []string {
	a := amendmentFor(proposed, prompting)
	if slices.ContainsFunc(a, func(t string) bool { return !rules.RuleToken(t) }) {
		return nil // "Always allow" could not save it after the user chose it
	}
	if risk.CarriesCredential(a) {
		return nil // saving it would write the secret into a rules file
	}
	return a
}

func amendmentFor(proposed []string, prompting []command.Segment) []string {
	if len(prompting) == 0 {
		return nil
	}
	if len(proposed) > 0 && !bannedAmendment(proposed) {
		covers := true
		r := &rules.Rule{Pattern: make([][]string, len(proposed))}
		for i, t := range proposed {
			r.Pattern[i] = []string{t}
		}
		for _, s := range prompting {
			if !r.Matches(s.Argv) {
				covers = false
			}
		}
		if covers {
			return append([]string(nil), proposed...)
		}
	}
	first := prompting[0]
	if !first.Literal || first.Assigns || bannedAmendment(first.Argv) {
		return nil
	}
	return append([]string(nil), first.Argv...)
}

var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "py": true, "pypy": true, "pypy3": true,
	"node": true, "deno": true, "bun": true, "perl": true, "ruby": true, "php": true, "lua": true,
	"bash": true, "sh": true, "zsh": true, "dash": true, "fish": true, "ksh": true, "csh": true, "tcsh": true,
	"pwsh": true, "powershell": true, "osascript": true, "git": true,
}

// bannedAmendment reports prefixes too broad to remember: a bare
// interpreter, shell or git, an interpreter with only a one-liner flag, and
// anything starting with a program that runs another command (env, sudo...)
// or with a shell builtin;
// and prefixes too narrow to mean anything later: one whose words name a
// temporary path or a random-looking name (oneOffWord).
func bannedAmendment(prefix []string) bool {
	if len(prefix) == 0 {
		return true
	}
	for _, w := range prefix {
		if oneOffWord(w) {
			return true
		}
	}
	prog := filepath.Base(prefix[0])
	if command.Wrappers[prog] || prog == "su" || prog == "eval" {
		return true
	}
	if prog == prefix[0] && command.IsBuiltin(prog) {
		// The shell runs it itself (exit, umask, kill…): a rule for it
		// would remember nothing a later command means.
		return true
	}
	base := strings.TrimRight(prog, "0123456789.")
	if !interpreters[prog] && !interpreters[base] {
		return false
	}
	if len(prefix) == 1 {
		return true
	}
	return len(prefix) == 2 && strings.HasPrefix(prefix[1], "-")
}
