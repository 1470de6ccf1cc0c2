package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// agentTools are what an agent session in the editor acts through.
type agentTools struct {
	runner  agent.CommandRunner
	patcher agent.PatchApplier
}

// agentTools builds, for a session in root, the command runner and patch
// path: both go through one orchestrator with the editor's dialogs, the
// connection's approved-for-session store, the audit log and the sandbox.
func (s *Server) agentTools(root string, model agent.Model) (agentTools, error) {
	orch, sb, err := s.orchestrator(root, model)
	if err != nil {
		return agentTools{}, err
	}
	return agentTools{
		runner:  &agent.Orchestrated{Orchestrator: orch, Sandbox: sb},
		patcher: &agent.PatchPath{Workspace: s.PatchWorkspace(), Orchestrator: orch, Sandbox: sb, Checkpoints: s.Checkpoints()},
	}, nil
}

// orchestrator assembles the approvals orchestrator for commands and
// patches in root under the current configuration. With a model and
// risk_summary on, command dialogs also carry the model's risk summary.
func (s *Server) orchestrator(root string, model agent.Model) (*approvals.Orchestrator, approvals.Sandbox, error) {
	cfg := s.Config()
	policy, err := approvals.ParsePolicy(cfg.ApprovalPolicy, cfg.Granular)
	if err != nil {
		return nil, approvals.Sandbox{}, err
	}
	sbPolicy, err := sandbox.NewPolicy(cfg.SandboxMode, cfg.Network, cfg.WritableRoots)
	if err != nil {
		return nil, approvals.Sandbox{}, err
	}
	sb, err := approvals.SandboxFor(sbPolicy, root)
	if err != nil {
		return nil, approvals.Sandbox{}, err
	}
	audit, err := s.auditLog()
	if err != nil {
		// The audit log is part of the contract: without it, nothing runs.
		return nil, approvals.Sandbox{}, err
	}
	rules, rulesErr := approvals.NewRuleBook(approvals.UserSources(config.RulesDir(), cfg.CodexRulesDir, root, trusted(cfg, root)), nil)
	if rulesErr != nil {
		s.log.Warn("rules not loaded; anything not known-safe needs approval", "err", rulesErr)
	}
	var prompter approvals.Prompter = &patchPrompter{s: s}
	if cfg.Model.RiskSummary && model != nil {
		prompter = &agent.RiskPrompter{
			Inner:      prompter,
			Summarizer: &agent.RiskSummarizer{Model: model, Deadline: cfg.Model.RiskDeadline.D()},
			OnError:    func(err error) { s.log.Info("model risk summary left out", "err", err) },
		}
	}
	var gapsOnce sync.Once
	return &approvals.Orchestrator{
		Policy: policy, Rules: rules, RulesDir: config.RulesDir(),
		Prompter: prompter, Session: s.patchApprovalSession(), Audit: audit,
		Runner: &approvals.SandboxRunner{OnNotEnforced: func(gaps []string) {
			gapsOnce.Do(func() {
				s.client.LogMessage(protocol.MessageTypeWarning, "Warden: not enforced on this machine: "+strings.Join(gaps, "; "))
			})
		}},
		Notify: func(msg string) { s.client.ShowMessage(protocol.MessageTypeInfo, "Warden: "+msg) },
	}, sb, nil
}

type auditKey struct{}

type auditHolder struct {
	once sync.Once
	log  *approvals.AuditLog
	err  error
}

// auditLog is the connection's audit log in the state directory, opened once.
func (s *Server) auditLog() (*approvals.AuditLog, error) {
	h := s.Value(auditKey{}, func() any { return &auditHolder{} }).(*auditHolder)
	h.once.Do(func() {
		h.log, h.err = approvals.OpenAuditLog(config.StateDir())
		if h.err != nil {
			h.err = fmt.Errorf("audit log: %w; Warden runs nothing it cannot record", h.err)
		}
	})
	return h.log, h.err
}

// trusted reports whether root is inside a workspace the user marked
// trusted in config.toml (only then may its .warden rules loosen policy).
func trusted(cfg config.Config, root string) bool {
	for _, t := range cfg.TrustedWorkspaces {
		abs, err := filepath.Abs(t)
		if err == nil && isWithin(root, abs) {
			return true
		}
	}
	return false
}
