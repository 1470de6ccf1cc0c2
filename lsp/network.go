package lsp

import (
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// networkState holds one network decider per root and settings, for the
// connection's life, so concurrent connections share dialogs and "Deny
// and stop" reaches every run registered with it.
type networkState struct {
	deciders map[string]*approvals.NetworkDecider
	proxies  map[*approvals.NetworkDecider]*approvals.NetworkProxy
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
	st := s.approvalState()
	key := fmt.Sprintf("%s\x00%s\x00%q\x00%q\x00%s", realPath(root), cfg.ApprovalPolicy, cfg.Granular, cfg.TrustedWorkspaces, cfg.CodexRulesDir)
	ns := s.Value(networkStateKey{}, func() any {
		return &networkState{deciders: map[string]*approvals.NetworkDecider{}, proxies: map[*approvals.NetworkDecider]*approvals.NetworkProxy{}}
	}).(*networkState)
	st.mu.Lock()
	defer st.mu.Unlock()
	if d, ok := ns.deciders[key]; ok {
		return d, nil
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
		Notify:    func(msg string) { s.Client().ShowMessage(protocol.MessageTypeInfo, approvals.EscapeText(msg)) },
	})
	ns.deciders[key] = d
	return d, nil
}

// NetworkProxy is the proxy that the sandboxed commands of work in root
// reach the outside through under network ask: one per network decider,
// so concurrent runs share its dialogs and session answers.
func (s *Server) NetworkProxy(root string) (*approvals.NetworkProxy, error) {
	d, err := s.NetworkDecider(root)
	if err != nil {
		return nil, err
	}
	st := s.approvalState()
	ns := s.Value(networkStateKey{}, nil).(*networkState)
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := ns.proxies[d]
	if !ok {
		p = approvals.NewNetworkProxy(d, netproxy.Options{})
		ns.proxies[d] = p
	}
	return p, nil
}
