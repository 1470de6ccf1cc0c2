package approvals

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals/risk"
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
	addGrantRisk(&p.Risk, req.Sandbox.Policy(), suggest, req.Cwd)
	p.AllowSession = p.Risk.Level < risk.High
	p.Grant, p.Added, p.OfferUnsandboxed = wider, suggest, true
	why, blocked := "the sandbox blocked it", out.Result.Denial
	if !out.Result.SandboxDenied {
		why, blocked = "Warden's proxy refused network to "+strings.Join(suggest.Network, ", "), strings.Join(out.Result.NetworkNotes, "; ")
	}
	p.Reason = why + "; it can run again in the sandbox with " + req.Sandbox.DescribeGrant(suggest)
	p.Blocked = blocked
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

// retryRefusedHosts is step 4 of Exec for a run the sandbox did not block
// but whose proxy refused hosts: when networkRetry finds the narrow grant
// and the policy offers retries, the dialog offers to rerun in the sandbox
// with network to exactly those hosts (running with no sandbox stays a
// separate action).
func (o *Orchestrator) retryRefusedHosts(ctx context.Context, out *ExecOutcome, req ExecRequest, ev *Evaluation, had sandbox.Grant, budget *time.Duration) (*ExecOutcome, error) {
	suggest := networkRetry(out.Result, had)
	if suggest.IsZero() || !o.Policy.wantsRetryPrompt(false) || o.Policy.rejects(categoryEscalation) {
		return out, nil
	}
	return o.retryWithGrant(ctx, out, req, ev, had, suggest, budget)
}

// networkRetry is the network grant a retry may offer after a run: the
// hosts the proxy refused for a reason a grant overrides (RefusedHosts: the
// policy never or granular refused them, or the dialog got no answer; never
// a forbid rule, the user's own Deny a moment ago, a link-local address,
// or a name that resolved to a private address, which no grant opens), and
// only when the command failed: one that succeeded without the host (a
// fallback mirror) is not run twice, one that timed out or was stopped is
// not rerun. Zero when there is nothing to offer.
func networkRetry(res RunResult, had sandbox.Grant) sandbox.Grant {
	if res.ExitCode == 0 || res.TimedOut || res.Canceled {
		return sandbox.Grant{}
	}
	var hosts []string
	for _, h := range res.RefusedHosts {
		if _, _, err := grantEntry(h); err != nil || grantCovers(had, sandbox.Grant{Network: []string{h}}) {
			continue // granted already: something a grant does not open refused it
		}
		hosts = append(hosts, h)
	}
	return sandbox.Grant{Network: hosts}.Union(sandbox.Grant{})
}
