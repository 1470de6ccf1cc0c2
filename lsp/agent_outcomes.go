package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/lsp/jobs"
)

// outcomeRunner shows each of the agent's commands as it ends, so the
// user can check a model's "tests pass" against the exit statuses.
type outcomeRunner struct {
	agent.CommandRunner
	obs *jobObserver
}

func (r outcomeRunner) RunCommand(ctx context.Context, cmd agent.Command) (agent.CommandResult, error) {
	res, err := r.CommandRunner.RunCommand(ctx, cmd)
	if err == nil && ctx.Err() == nil {
		jobs.AwaitProgress(ctx)
		r.obs.commandOutcome(agent.CommandOutcome(cmd.Argv, res), res.Verdict != agent.Ran || res.ExitCode != 0 || len(res.NetworkRefused) > 0)
	}
	return res, err
}

// commandOutcome says how one command ended, one line: in the job's
// progress and the editor's log, and as a message for a client without
// progress UI (it would otherwise see only the agent's answer).
func (o *jobObserver) commandOutcome(line string, warn bool) {
	o.job.Report(line, -1)
	typ := protocol.MessageTypeInfo
	if warn {
		typ = protocol.MessageTypeWarning
	}
	o.s.client.LogMessage(typ, "Warden: agent: "+line)
	if !o.job.HasProgress() {
		o.s.client.ShowMessage(typ, "Warden: agent: "+line)
	}
}
