package lsp

import (
	"fmt"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// approvalState lives as long as the connection: one session store (so
// "Allow for session" lasts the session), one audit log, and one watched
// rule book per workspace root.
type approvalState struct {
	mu      sync.Mutex
	session *approvals.SessionStore
	audit   *approvals.AuditLog
	books   map[string]*rules.RuleBook
	// skipped are the missing writable roots already logged.
	skipped map[string]bool
	// policy is the last sandbox and approval policy built (nil: none).
	policy *builtPolicy
	// gapsSaid: what this machine's sandbox cannot enforce is shown once a
	// connection, at the first run that met it.
	gapsSaid sync.Once
}

type approvalStateKey struct{}

func (s *Server) approvalState() *approvalState {
	return s.Value(approvalStateKey{}, func() any {
		return &approvalState{session: approvals.NewSessionStore(), books: map[string]*rules.RuleBook{}}
	}).(*approvalState)
}

// Orchestrator returns the approvals orchestrator for work in the workspace
// root, built from the current settings (policy, sandbox), with the
// connection's session store, audit log and rule book, and this editor as
// the prompter. It also returns the sandbox commands there run in. An error
// means nothing may run: the audit log or the sandbox policy is unusable.
func (s *Server) Orchestrator(root string) (*approvals.Orchestrator, approvals.Sandbox, error) {
	cfg := s.Config()
	built, err := s.builtPolicy(cfg)
	if err != nil {
		return nil, approvals.Sandbox{}, err
	}
	policy, sb := built.policy, built.sandbox
	book, audit, err := s.approvalParts(cfg, root)
	if err != nil {
		return nil, approvals.Sandbox{}, err
	}
	var proxy *approvals.NetworkProxy
	if built.network == sandbox.NetworkAsk {
		proxy = s.network(cfg, root, policy, book, audit).proxy
	}
	st := s.approvalState()
	return &approvals.Orchestrator{
		Policy:   policy,
		Rules:    book,
		RulesDir: config.RulesDir(),
		Prompter: &EditorPrompter{Server: s, Timeout: cfg.ApprovalTimeout.D()},
		Runner: &forgetAfterUnsandboxed{s, &approvals.SandboxRunner{Env: sandbox.EnvPolicy{Keep: cfg.EnvKeep}, Changes: s.changeLogFor(cfg), Network: proxy, OnNotEnforced: func(gaps []string) {
			s.Logger().Warn("sandbox: not enforced on this machine", "gaps", gaps)
			st.gapsSaid.Do(func() { s.Client().ShowMessage(protocol.MessageTypeWarning, notEnforcedMessage(gaps)) })
		}}},
		Session: st.session,
		Audit:   audit,
		Notify:  func(msg string) { s.Client().ShowMessage(protocol.MessageTypeInfo, command.EscapeText(msg)) },
	}, sb, nil
}

// notEnforcedMessage says, once a session, what the sandbox could not
// enforce here (the first gap is the one that changes most: network ask
// run as off, when it was).
func notEnforcedMessage(gaps []string) string {
	return "Warden: the sandbox cannot enforce everything on this machine (said once a session; warden doctor says why and what to do):\n- " + strings.Join(gaps, "\n- ")
}

// approvalParts returns the connection's audit log and the watched rule
// book for work in root, opening or loading them on first use. An error
// means nothing may run: the audit log is unusable.
func (s *Server) approvalParts(cfg config.Config, root string) (*rules.RuleBook, *approvals.AuditLog, error) {
	st := s.approvalState()
	st.mu.Lock()
	defer st.mu.Unlock()
	s.logSkippedRoots(st, cfg)
	if st.audit == nil {
		audit, err := approvals.OpenAuditLog(config.StateDir())
		if err != nil {
			return nil, nil, err
		}
		st.audit = audit
		go func() {
			<-s.Context().Done()
			audit.Close()
		}()
	}
	// Trust is per directory and exact, links resolved on both sides.
	realRoot := realPath(root)
	trusted := func(dir string) bool { return rules.TrustedWorkspace(cfg.TrustedWorkspaces, dir) }
	bookKey := fmt.Sprintf("%s\x00%q\x00%s", realRoot, cfg.TrustedWorkspaces, cfg.CodexRulesDir)
	book, ok := st.books[bookKey]
	if !ok {
		var err error
		book, err = rules.NewRuleBook(rules.UserSources(config.RulesDir(), cfg.CodexRulesDir, realRoot, trusted), nil)
		if err != nil {
			s.Client().ShowMessage(protocol.MessageTypeWarning, fmt.Sprintf("Warden: exec-policy rules failed to load, so anything not known-safe will ask: %s", command.EscapeLines(err.Error())))
		}
		if werr := book.Watch(s.Context(), func(err error) {
			if err != nil {
				s.Client().ShowMessage(protocol.MessageTypeWarning, fmt.Sprintf("Warden: rules not reloaded, keeping the last good rules: %s", command.EscapeLines(err.Error())))
			} else {
				s.Logger().Info("exec-policy rules reloaded", "root", root)
			}
		}); werr != nil {
			s.Logger().Warn("rules are not watched", "err", werr)
		}
		st.books[bookKey] = book
	}
	return book, st.audit, nil
}

// sandboxPolicy is the sandbox policy the settings ask for, for a session
// whose workspace roots are workspace.
func sandboxPolicy(cfg config.Config, workspace []string) (sandbox.Policy, error) {
	roots, _ := config.WritableRoots(cfg) // missing ones are skipped, as Codex does
	p, err := sandbox.NewPolicy(cfg.SandboxMode, string(cfg.Network), roots)
	p.Workspace = workspace
	p.ProtectedPaths = config.ProtectedPaths(cfg, workspace...)
	p.HomeWritable = cfg.HomeWritable
	p.Caches = toolcache.Caches{Root: config.ToolchainCaches(), MaxSize: cfg.CacheLimit()}
	if err != nil {
		return p, err
	}
	access, err := sandbox.ParseReadAccess(cfg.ReadAccess)
	if err != nil {
		return p, err
	}
	p.Reads = sandbox.ReadPolicy{Access: access, Deny: config.ReadDeny(cfg),
		Allow: config.ExpandHome(cfg.ReadAllow), ReadableRoots: config.ExpandHome(cfg.ReadableRoots)}
	return p, p.Validate()
}

// effectiveNetwork is the network sandboxed commands get under cfg: its
// network_access, or the sandbox mode's default (off when cfg is invalid).
func effectiveNetwork(cfg config.Config) sandbox.NetworkMode {
	n, err := sandbox.ResolveNetwork(cfg.SandboxMode, string(cfg.Network))
	if err != nil {
		return sandbox.NetworkOff
	}
	return n
}
