package agent

import (
	"context"
	"errors"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/rules"
)

// captureKeep bounds the output kept per command before truncation for the
// model (which keeps far less): enough for a useful head and tail.
const captureKeep = 256 << 10

// Orchestrated runs the agent's commands through the approvals orchestrator:
// policy, the user's approval, the sandbox and escalation.
type Orchestrated struct {
	Orchestrator *approvals.Orchestrator
	// Sandbox is the sandbox commands run in (from the configuration).
	Sandbox approvals.Sandbox
}

// RunCommand implements CommandRunner.
func (o *Orchestrated) RunCommand(ctx context.Context, cmd Command) (CommandResult, error) {
	if o.Orchestrator == nil {
		return CommandResult{}, errors.New("no orchestrator: commands cannot run")
	}
	out := &Capture{Keep: captureKeep}
	outcome, err := o.Orchestrator.Exec(ctx, approvals.ExecRequest{
		CommandRequest: approvals.CommandRequest{
			Argv: cmd.Argv, Cwd: cmd.Dir, Sandbox: o.Sandbox,
			RequestEscalation: cmd.Escalate, Justification: cmd.Justification, PrefixRule: cmd.PrefixRule, Grant: cmd.Grant,
		},
		Timeout: cmd.Timeout,
		Stdout:  out,
		Stderr:  out,
	})
	if err != nil {
		return CommandResult{}, err
	}
	res := commandResult(outcome, out.String())
	if res.Verdict == Ran && res.Sandboxed && !outcome.Grant.IsZero() {
		res.Granted = o.Sandbox.DescribeGrant(outcome.Grant)
	}
	if cmd.Escalate && res.Verdict == Ran && res.Sandboxed {
		// The model asked to leave the sandbox and was kept in it (policy
		// lets low-risk commands inside the writable roots run sandboxed
		// without asking): it must know, to read a failure right.
		res.Output += "\n[Warden: you asked to run outside the sandbox; it ran inside it"
		if outcome.Evaluation != nil && outcome.Evaluation.Reason != "" {
			res.Output += " (" + outcome.Evaluation.Reason + ")"
		}
		res.Output += ". If the sandbox blocked it, the output says so.]"
	}
	return res, nil
}

// commandResult translates the orchestrator's outcome into what the model
// is told.
func commandResult(o *approvals.ExecOutcome, output string) CommandResult {
	if o.Abort {
		return CommandResult{Verdict: Stopped, Reason: o.Refused}
	}
	if !o.Ran {
		v := Denied
		if o.Evaluation != nil && o.Evaluation.Decision == rules.Forbidden {
			v = Forbidden
		}
		return CommandResult{Verdict: v, Reason: o.Refused}
	}
	res := CommandResult{
		Verdict:   Ran,
		ExitCode:  o.Result.ExitCode,
		Output:    output,
		Sandboxed: !o.Escalated,
		TimedOut:  o.Result.TimedOut,
		Duration:  o.Result.Duration,
	}
	for _, r := range o.Result.Removed {
		res.Output += "\n[Warden: " + r.String() + "]"
	}
	if c := o.Result.Changes; c != nil {
		res.Changed = c.Summary
		note := "the user can undo it"
		if !c.Recorded {
			note = "not recorded: it cannot be undone"
		}
		res.Output += "\n[Warden: this command " + c.Summary + " (" + note + ")]"
	}
	res.NetworkRefused = o.Result.NetworkNotes
	for _, n := range o.Result.NetworkNotes {
		res.Output += "\n[Warden proxy: " + n + "]"
	}
	if o.Refused != "" {
		// It ran in the sandbox, was blocked, and running it again without
		// the sandbox was refused.
		res.Output += "\n[Warden: " + o.Refused + "]"
	}
	return res
}
