package approvals

import (
	"context"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/sandbox"
)

// retryWithGrant is step 4 of Exec when the denial names what the command
// lacked: the dialog offers to retry in the sandbox with that grant added
// (Allow once, Allow for session) and, as a separate action, to run it
// with no sandbox at all; high risk puts Deny first.
func (o *Orchestrator) retryWithGrant(ctx context.Context, out *ExecOutcome, req ExecRequest, ev *Evaluation, had, suggest sandbox.Grant, budget *time.Duration) (*ExecOutcome, error) {
	wider := had.Union(suggest)
	p := o.commandPrompt(PromptRetry, req, ev, true)
	p.Risk = ev.Risk
	p.Risk.Facts = append([]string(nil), ev.Risk.Facts...)
	addGrantRisk(&p.Risk, req.Sandbox.Policy(), suggest)
	p.AllowSession = p.Risk.Level < RiskHigh
	p.Grant, p.Added, p.OfferUnsandboxed = wider, suggest, true
	p.Reason = "the sandbox blocked it; it can run again in the sandbox with " + req.Sandbox.DescribeGrant(suggest)
	p.Blocked = out.Result.Denial
	p.Amendment = nil
	d, cached, err := o.ask(ctx, p, grantKeys(req.Argv, req.Cwd, req.Sandbox, wider))
	out.Asked, out.Decision = !cached, d
	if !d.IsApproval() {
		out.Abort = d == Abort
		out.Refused = denialReason(ev, d, err)
		o.audit(AuditEvent{Event: "refused", Kind: "command", Argv: req.Argv, Cwd: req.Cwd, Reason: out.Refused, Grant: grantRef(suggest)})
		return out, nil
	}
	unsandboxed := d == ApprovedUnsandboxed
	if unsandboxed {
		wider = sandbox.Grant{}
	}
	res, err := o.run(ctx, req, unsandboxed, wider, budget)
	if err != nil {
		return out, err
	}
	out.Result, out.Escalated, out.Grant = res, unsandboxed, wider
	return out, nil
}

// grantRef is g for an audit line or a rule: nil when it adds nothing.
func grantRef(g sandbox.Grant) *sandbox.Grant {
	if g.IsZero() {
		return nil
	}
	return &g
}

// grantJSON is g as the shell tool's additional_permissions argument.
func grantJSON(g sandbox.Grant) string {
	b, _ := json.Marshal(g)
	return string(b)
}
