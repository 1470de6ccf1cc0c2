package lsp

import (
	"github.com/wardenhq/warden/agent"
)

// agentTools are what an agent session in the editor acts through.
type agentTools struct {
	runner  agent.CommandRunner
	patcher agent.PatchApplier
	// reads is the read policy of read_file, list_dir and forwarded editor
	// text: the sandbox's, with secret files asked through the same dialogs.
	reads agent.ReadGate
}

// agentTools builds, for a session in root, the command runner and the patch
// path. Both go through the connection's orchestrator (the editor's dialogs,
// the approved-for-session store, the audit log, the sandbox) and patches
// land through the editor's workspace. With risk_summary on, command dialogs
// also carry the model's risk summary when it arrives in time.
func (s *Server) agentTools(root string, model agent.Model) (agentTools, error) {
	orch, sb, err := s.Orchestrator(root)
	if err != nil {
		return agentTools{}, err
	}
	if cfg := s.Config(); cfg.Model.RiskSummary && model != nil {
		orch.Prompter = &agent.RiskPrompter{
			Inner:      orch.Prompter,
			Summarizer: &agent.RiskSummarizer{Model: model, Deadline: cfg.Model.RiskDeadline.D()},
			OnError:    func(err error) { s.log.Info("model risk summary left out", "err", err) },
		}
	}
	runner := &agent.Orchestrated{Orchestrator: orch, Sandbox: sb}
	return agentTools{
		runner:  runner,
		reads:   runner,
		patcher: &agent.PatchPath{Workspace: s.PatchWorkspace(), Orchestrator: orch, Sandbox: sb, Checkpoints: s.Checkpoints()},
	}, nil
}
