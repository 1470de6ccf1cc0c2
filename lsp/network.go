package lsp

import (
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// networkState holds one network decider per root and settings, for the
// connection's life, so concurrent connections share dialogs and "Deny
// and stop" reaches every run registered with it.
type networkState struct {
	byKey map[string]networkParts
}

// networkParts are a decider and the proxy that asks it, made together.
type networkParts struct {
	decider *approvals.NetworkDecider
	proxy   *approvals.NetworkProxy
}

type networkStateKey struct{}

// NetworkDecider returns the decider for sandboxed commands' connections
// from work in root: the current approval policy, the root's rule book, the
// connection's session store and audit log, and this editor's dialogs
// (window/showMessageRequest, the same contract as commands). The sandbox
// proxy calls its Decide and Record; a run registers its cancel function
// with RegisterRun for "Deny and stop".
func (s *Server) NetworkDecider(root string) (*approvals.NetworkDecider, error) {
	cfg := s.Config()
	policy, err := approvals.ParsePolicy(cfg.ApprovalPolicy, cfg.Granular)
	if err != nil {
		return nil, err
	}
	book, audit, err := s.approvalParts(cfg, root)
	if err != nil {
		return nil, err
	}
	return s.network(cfg, root, policy, book, audit).decider, nil
}

// network returns the decider and proxy for work in root under cfg, made
// once per root and settings from the parts the caller already holds.
func (s *Server) network(cfg config.Config, root string, policy approvals.Policy, book *rules.RuleBook, audit *approvals.AuditLog) networkParts {
	st := s.approvalState()
	key := fmt.Sprintf("%s\x00%s\x00%q\x00%q\x00%s", realPath(root), cfg.ApprovalPolicy, cfg.Granular, cfg.TrustedWorkspaces, cfg.CodexRulesDir)
	ns := s.Value(networkStateKey{}, func() any {
		return &networkState{byKey: map[string]networkParts{}}
	}).(*networkState)
	st.mu.Lock()
	defer st.mu.Unlock()
	if n, ok := ns.byKey[key]; ok {
		return n
	}
	d := approvals.NewNetworkDecider(approvals.NetworkConfig{
		Policy:    policy,
		Rules:     book,
		RulesDir:  config.RulesDir(),
		Prompter:  &EditorPrompter{Server: s, Timeout: cfg.ApprovalTimeout.D()},
		Session:   st.session,
		Audit:     audit,
		Workspace: s.workspaceRoots(),
		Context:   s.Context(),
		Notify:    func(msg string) { s.Client().ShowMessage(protocol.MessageTypeInfo, command.EscapeText(msg)) },
	})
	n := networkParts{decider: d, proxy: approvals.NewNetworkProxy(d, netproxy.Options{})}
	ns.byKey[key] = n
	return n
}
