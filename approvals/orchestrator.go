package approvals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
)

// Runner runs one attempt of a command. The sandbox package provides the
// real one (see cmd/warden for the adapter); approvals only needs this.
type Runner interface {
	Run(ctx context.Context, spec RunSpec) (RunResult, error)
}

// RunSpec is one attempt.
type RunSpec struct {
	Argv    []string
	Cwd     string
	Sandbox Sandbox
	// Unsandboxed runs the command with no sandbox at all (an approved
	// escalation, or a command every segment of which an allow rule covers).
	Unsandboxed bool
	// Grant is what the sandboxed attempt may do beyond Sandbox (resolved).
	Grant sandbox.Grant
	// Timeout bounds this attempt's run time; zero means none.
	Timeout        time.Duration
	Stdout, Stderr io.Writer // nil discards
	// Ready returns once the audit lines that decided this attempt are on
	// disk; an error means the attempt must not start. A Runner that says
	// so (ReadyCaller) calls it itself just before the command can start,
	// so the fsync overlaps the sandbox's preparation; for any other Runner
	// the orchestrator waits before calling Run, and Ready returns nil.
	Ready func() error
}

// ReadyCaller is a Runner that calls RunSpec.Ready before the command
// starts, and never starts it when Ready fails.
type ReadyCaller interface {
	CallsReady() bool
}

// RunResult is what one attempt did.
type RunResult struct {
	ExitCode int
	// SandboxDenied: the sandbox most likely blocked the command (Codex's
	// denial heuristics: "operation not permitted", SIGSYS...).
	SandboxDenied bool
	// Denial is a short excerpt explaining the denial, for the retry prompt.
	Denial string
	// Suggest is the narrowest grant that would let it through, when the
	// denial names one (sandbox.Policy.DeriveGrant); zero otherwise.
	Suggest  sandbox.Grant
	TimedOut bool
	Canceled bool
	Duration time.Duration
	// Removed are the protected paths the command created, which the
	// sandbox moved to its quarantine (audited and told to the user).
	Removed []sandbox.Removed
	// NetworkNotes are the proxy's refusals during the run (hosts and why),
	// for the user and the model.
	NetworkNotes []string
	// Changes is what the run changed in the workspace, recorded for undo
	// (a ChangeLog on the Runner); nil when it changed nothing or was not
	// recorded.
	Changes *RunChanges
	// RefusedHosts are the destinations (host:port) the proxy refused for
	// a reason a network grant overrides (the policy, no answer), never a
	// forbid rule or the user's Deny: what a retry may offer.
	RefusedHosts []string
}

// Orchestrator is the one path every command and patch takes: requirement →
// (forbidden: stop) → (needs approval: ask, with the session cache) → first
// attempt in the sandbox → (sandbox denial and the policy allows it: ask
// again, run without the sandbox) → result. Every step is audited; the lines
// are batched and made durable at each barrier: before a dialog, before a
// command runs or a rule is saved, and before the outcome is returned.
type Orchestrator struct {
	Policy   Policy
	Rules    *rules.RuleBook // nil: no rules
	RulesDir string          // where "Always allow" persists rules (config.RulesDir())
	Prompter Prompter
	Runner   Runner
	Session  *SessionStore // nil: a fresh store per orchestrator
	Audit    *AuditLog     // nil: no audit
	// ProtectedPaths are paths inside writable roots that patches must ask
	// about (e.g. .git, .warden); relative ones are taken from the cwd.
	ProtectedPaths []string
	// Notify, if set, is told about things the user should know that are not
	// errors, such as a persisted rule.
	Notify func(msg string)

	sessionOnce sync.Once
}

// ExecRequest is a command plus how to run it.
type ExecRequest struct {
	CommandRequest
	Timeout        time.Duration // run time only: waiting for the user does not count
	Stdout, Stderr io.Writer
}

// ExecOutcome is what happened to a request.
type ExecOutcome struct {
	Evaluation *Evaluation
	// Ran reports whether the command ran at all; Result is its last attempt.
	Ran       bool
	Result    RunResult
	Escalated bool // the last attempt ran without the sandbox
	// Grant is what the last attempt could do beyond the sandbox (zero when
	// none, or when it ran without the sandbox).
	Grant sandbox.Grant
	// Refused is why Warden did not run it (forbidden, denied, or a denial
	// the policy would not escalate), or "".
	Refused string
	// Decision is the user's last answer, when one was asked for.
	Decision ReviewDecision
	Asked    bool
	// Abort: the user chose "Deny and stop"; the agent's turn ends.
	Abort bool
}

// ErrNoPrompter is returned when a request needs the user but nobody can be
// asked; the request is refused.
var ErrNoPrompter = errors.New("approval needed but no prompter is available")

func (o *Orchestrator) session() *SessionStore {
	o.sessionOnce.Do(func() {
		if o.Session == nil {
			o.Session = NewSessionStore()
		}
	})
	return o.Session
}

// Evaluator returns an evaluator over the rules currently in force.
func (o *Orchestrator) Evaluator() *Evaluator {
	ev := &Evaluator{Policy: o.Policy, RulesDir: o.RulesDir}
	if r, ok := o.Runner.(interface{ RunEnv() []string }); ok {
		ev.RunEnv = r.RunEnv
	}
	if r, ok := o.Runner.(interface{ RecordsChanges() bool }); ok {
		ev.RecordsChanges = r.RecordsChanges()
	}
	if o.Rules != nil {
		ev.Rules, ev.RulesErr = o.Rules.Current()
	}
	return ev
}

// Exec takes one command through approval and the sandbox.
func (o *Orchestrator) Exec(ctx context.Context, req ExecRequest) (*ExecOutcome, error) {
	defer o.commit()
	// 0. Where it runs: judged, keyed, shown and run with links resolved.
	realCwd, cwdErr := resolveWorkdir(req.Cwd)
	if cwdErr == nil {
		req.Cwd = realCwd
	}
	ev := o.Evaluator().Evaluate(req.CommandRequest)
	out := &ExecOutcome{Evaluation: ev}
	if cwdErr != nil {
		ev.Decision, ev.Reason = rules.Forbidden, cwdErr.Error()
		return o.refuse(out, req, ev.Reason), nil
	}
	outside := ""
	if ev.Decision != rules.Forbidden {
		outside = o.judgeWorkdir(req.CommandRequest, ev)
	}
	o.audit(AuditEvent{Event: "requirement", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Decision: ev.Decision.String(), Reason: ev.Reason, Risk: ev.Risk.Level.String(), Grant: grantRef(ev.Grant)})

	// 1. Forbidden: nothing runs.
	if ev.Decision == rules.Forbidden {
		return o.refuse(out, req, ev.Reason), nil
	}

	// 2. Needs approval: ask, unless this session already approved it.
	escalate := !req.Sandbox.Restricted()
	grant := ev.Grant
	if ev.Decision == rules.Prompt {
		sandboxed := !ev.Escalate && req.Sandbox.Restricted()
		p := o.commandPrompt(PromptCommand, req, ev, sandboxed)
		keys := []string{CommandKey(req.Argv, req.Cwd, sandboxKey(req.Sandbox, !sandboxed))}
		if why := o.session().Lapsed(keys); why != "" {
			p.Reason += "; " + why
		}
		if sandboxed && !grant.IsZero() {
			// Keyed by the command and each entry of its grant: a later
			// request for more asks again, one for a subset does not.
			p.Grant, keys = grant, grantKeys(req.Argv, req.Cwd, req.Sandbox, grant)
		}
		d, cached, err := o.ask(ctx, p, keys)
		out.Asked, out.Decision = !cached, d
		if !d.IsApproval() {
			out.Abort = d == Abort
			reason := denialReason(ev, d, err)
			if outside != "" {
				reason += " (" + outside + ")"
			}
			return o.refuse(out, req, reason), nil
		}
		if d == ApprovedWithAmendment {
			o.persistAmendment(req, ev.Amendment, p.Grant)
		}
		escalate = escalate || ev.Escalate
	}
	if escalate {
		grant = sandbox.Grant{} // no sandbox to widen
	}

	// 3. First attempt, sandboxed (plus its grant) unless escalation is
	// already granted.
	if ev.RunArgv != nil {
		req.Argv = ev.RunArgv // hardened git: what runs, and what the audit says ran
	}
	budget := req.Timeout
	res, err := o.run(ctx, req, escalate, grant, &budget)
	if err != nil {
		return out, err
	}
	out.Ran, out.Result, out.Escalated, out.Grant = true, res, escalate, grant

	// 4. Sandbox denial (or hosts the proxy refused): offer the narrowest
	// grant Warden can derive from it, or running without the sandbox,
	// where the policy allows.
	if escalate {
		return out, nil
	}
	if !res.SandboxDenied {
		return o.retryRefusedHosts(ctx, out, req, ev, grant, &budget)
	}
	suggest := res.Suggest
	if grant.Covers(suggest) {
		suggest = sandbox.Grant{} // it had that already: something else blocked it
	}
	// The model's own escalation request counts as asking for the retry:
	// under on-request it was run sandboxed first only because it looked
	// harmless, and refusing now would leave the model re-asking in a loop.
	retry := o.Policy.wantsRetryPrompt(false) || (req.RequestEscalation && o.Policy.Ask == OnRequest)
	if !retry || o.Policy.rejects(categoryEscalation) {
		out.Refused = "the sandbox blocked it; the " + o.Policy.Ask.String() + " policy does not offer a retry without the sandbox"
		if !suggest.IsZero() {
			out.Refused += "; to ask the user for what it lacked, run it again with sandbox_permissions \"with_additional_permissions\" and additional_permissions " + grantJSON(suggest)
		}
		o.audit(AuditEvent{Event: "refused", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Reason: out.Refused})
		return out, nil
	}
	if !suggest.IsZero() {
		return o.retryWithGrant(ctx, out, req, ev, grant, suggest, &budget)
	}
	p := o.commandPrompt(PromptRetry, req, ev, false)
	p.Reason = "command failed in the sandbox; retry without sandbox?"
	p.Blocked = res.Denial
	p.Amendment = nil
	keys := []string{CommandKey(req.Argv, req.Cwd, sandboxKey(req.Sandbox, true))}
	if why := o.session().Lapsed(keys); why != "" {
		p.Reason += "; " + why
	}
	d, cached, err := o.ask(ctx, p, keys)
	out.Asked, out.Decision = !cached, d
	if !d.IsApproval() {
		out.Abort = d == Abort
		out.Refused = denialReason(ev, d, err)
		o.audit(AuditEvent{Event: "refused", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Reason: out.Refused})
		return out, nil
	}
	res, err = o.run(ctx, req, true, sandbox.Grant{}, &budget)
	if err != nil {
		return out, err
	}
	out.Result, out.Escalated, out.Grant = res, true, sandbox.Grant{}
	return out, nil
}

// run makes one attempt and charges its run time (never prompt time) to the
// remaining budget.
func (o *Orchestrator) run(ctx context.Context, req ExecRequest, unsandboxed bool, grant sandbox.Grant, budget *time.Duration) (RunResult, error) {
	if req.Timeout > 0 && *budget <= 0 {
		return RunResult{ExitCode: -1, TimedOut: true}, nil
	}
	// The decision that allowed it is on disk before it runs.
	ready, wait, err := o.barrierBeforeRun()
	if err != nil {
		return RunResult{ExitCode: -1}, fmt.Errorf("run %s: %w", command.Display(req.Argv), err)
	}
	if !unsandboxed && (req.Sandbox.Mode != ReadOnly || len(grant.Write) > 0) {
		// What it writes may be what an approved unsandboxed command reads.
		o.session().LapseUnsandboxed(fmt.Sprintf("the sandboxed run of `%s`", command.Display(req.Argv)))
	}
	start := time.Now()
	res, err := o.Runner.Run(ctx, RunSpec{
		Argv: req.Argv, Cwd: req.Cwd, Sandbox: req.Sandbox, Unsandboxed: unsandboxed, Grant: grant,
		Timeout: *budget, Stdout: req.Stdout, Stderr: req.Stderr, Ready: ready,
	})
	if serr := wait(); serr != nil && err == nil {
		err = serr
	}
	if req.Timeout > 0 {
		*budget -= time.Since(start)
	}
	sandboxed := !unsandboxed
	ev := AuditEvent{Event: "run", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Sandboxed: &sandboxed, Grant: grantRef(grant)}
	if err != nil {
		ev.Reason = err.Error()
		o.audit(ev)
		return res, fmt.Errorf("run %s: %w", command.Display(req.Argv), err)
	}
	code := res.ExitCode
	ev.ExitCode = &code
	if res.SandboxDenied {
		ev.Reason = "sandbox denied: " + res.Denial
	}
	if res.Changes != nil {
		ev.Changed = res.Changes.Summary
	}
	o.audit(ev)
	for _, r := range res.Removed {
		o.audit(AuditEvent{Event: "quarantine", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Files: []string{r.Path}, Reason: r.String()})
		if o.Notify != nil {
			o.Notify(r.String())
		}
	}
	return res, nil
}

func (o *Orchestrator) commandPrompt(kind PromptKind, req ExecRequest, ev *Evaluation, sandboxed bool) PromptRequest {
	return PromptRequest{
		Kind: kind, Argv: req.Argv, Command: command.Display(req.Argv), Cwd: req.Cwd,
		Justification: req.Justification, Reason: ev.Reason, Sandboxed: sandboxed, Sandbox: req.Sandbox,
		Risk: ev.Risk, Amendment: ev.Amendment, AllowSession: ev.OffersSessionApproval(),
	}
}

// ask puts p to the user through the session store, so remembered answers
// skip the prompt and identical concurrent requests share one; cached
// reports an answer that was not asked for by this call. Errors and a
// missing prompter are denials.
func (o *Orchestrator) ask(ctx context.Context, p PromptRequest, keys []string) (d ReviewDecision, cached bool, err error) {
	kind := "command"
	switch p.Kind {
	case PromptPatch:
		kind = "patch"
	case PromptRead:
		kind = "read"
	}
	// A high-risk request is asked every time, whatever was remembered.
	d, cached, err = o.session().Ask(ctx, keys, p.AllowSession, func(ctx context.Context) (ReviewDecision, error) {
		if o.Prompter == nil {
			return Denied, ErrNoPrompter
		}
		o.audit(AuditEvent{Event: "prompt", Kind: kind, Argv: p.Argv, Files: p.Files, Cwd: p.Cwd, Reason: p.Reason, Justification: p.Justification, Risk: p.Risk.Level.String(), Grant: grantRef(p.Grant)})
		o.commit()
		d, err := o.Prompter.Prompt(ctx, p)
		if err != nil {
			return Denied, err
		}
		// A prompter may only return what it offered.
		if !offered(p, d) {
			return Denied, fmt.Errorf("prompter returned %s, which was not offered", d)
		}
		return d, nil
	})
	if err != nil {
		d = Denied
	}
	ev := AuditEvent{Event: "decision", Kind: kind, Argv: p.Argv, Files: p.Files, Cwd: p.Cwd, Decision: d.String(), Cached: cached, Grant: grantRef(p.Grant)}
	if err != nil {
		ev.Reason = err.Error()
	}
	o.audit(ev)
	return d, cached, err
}

func offered(p PromptRequest, d ReviewDecision) bool {
	for _, a := range p.Actions() {
		if a.Decision == d {
			return true
		}
	}
	return false
}

func (o *Orchestrator) persistAmendment(req ExecRequest, prefix []string, grant sandbox.Grant) {
	if len(prefix) == 0 || o.RulesDir == "" {
		return
	}
	o.commit() // the approval that saves the rule is on disk first
	// A rule for a request with a grant carries it: it stays sandboxed.
	added, err := rules.AppendGrantRule(o.RulesDir, prefix, grant)
	ev := AuditEvent{Event: "amendment", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Amendment: prefix, Grant: grantRef(grant)}
	switch {
	case err != nil:
		ev.Reason = err.Error()
		o.notify(fmt.Sprintf("Warden could not save the rule for `%s`: %v", command.Display(prefix), err))
	case added:
		ev.Reason = "appended to " + rules.DefaultRulesFile
		with := ""
		if !grant.IsZero() {
			with = ", in the sandbox with " + req.Sandbox.DescribeGrant(grant)
		}
		o.notify(fmt.Sprintf("Warden saved: always allow `%s`%s (%s)", command.Display(prefix), with, rules.DefaultRulesFile))
	default:
		ev.Reason = "already present in " + rules.DefaultRulesFile
	}
	o.audit(ev)
	if err == nil && o.Rules != nil {
		o.Rules.AddAllow(prefix, filepath.Join(o.RulesDir, rules.DefaultRulesFile), grantRef(grant))
	}
}

func (o *Orchestrator) refuse(out *ExecOutcome, req ExecRequest, reason string) *ExecOutcome {
	out.Refused = reason
	o.audit(AuditEvent{Event: "refused", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Reason: reason})
	return out
}

func denialReason(ev *Evaluation, d ReviewDecision, err error) string {
	switch {
	case errors.Is(err, ErrNoPrompter):
		return ev.Reason + "; nobody could be asked, so it was denied"
	case err != nil:
		return fmt.Sprintf("%s; no answer (%v), so it was denied", ev.Reason, err)
	case d == Abort:
		return "rejected by user (deny and stop)"
	}
	return "rejected by user"
}

// audit appends a line; the next commit makes it durable.
func (o *Orchestrator) audit(ev AuditEvent) {
	if err := o.Audit.Write(ev); err != nil {
		o.notify(err.Error())
	}
}

// barrierBeforeRun makes the lines audited so far durable before a command
// starts. With a ReadyCaller the fsync runs while the sandbox is prepared:
// ready (RunSpec.Ready) waits for it, and wait, called after Run, returns
// its error (a run that never started still reports the broken log).
// Otherwise the fsync happens here, and its error means nothing may run.
// A failed fsync refuses the run (fail closed): its decision would not be
// on record.
func (o *Orchestrator) barrierBeforeRun() (ready, wait func() error, err error) {
	if rc, ok := o.Runner.(ReadyCaller); ok && rc.CallsReady() {
		done := make(chan error, 1)
		go func() { done <- o.Audit.Sync() }()
		var once sync.Once
		var serr error
		wait = func() error {
			once.Do(func() {
				if serr = <-done; serr != nil {
					o.notify(serr.Error())
					serr = fmt.Errorf("audit log: %w", serr)
				}
			})
			return serr
		}
		return wait, wait, nil
	}
	if err := o.Audit.Sync(); err != nil {
		o.notify(err.Error())
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	none := func() error { return nil }
	return none, none, nil
}

// commit is a barrier: every line audited so far is on disk when it returns
// (one fsync, shared with concurrent commands).
func (o *Orchestrator) commit() {
	if err := o.Audit.Sync(); err != nil {
		o.notify(err.Error())
	}
}

func (o *Orchestrator) notify(msg string) {
	if o.Notify != nil {
		o.Notify(msg)
	}
}

func sandboxKey(s Sandbox, unsandboxed bool) string {
	if unsandboxed {
		return "unsandboxed"
	}
	return s.String()
}
