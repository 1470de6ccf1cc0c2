package lsp

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/sandbox"
)

// Building the approval and sandbox policy resolves the writable roots and
// some 60 protected paths through their links: 1.5 ms, which every command
// paid (issue 15's warm path). The result is reused while the settings and
// the workspace folders are the same. Rules need nothing here: the rule
// book is live and reloads itself. What the policy reads from the
// filesystem (links, which roots exist) is read again when an
// unsandboxed command has run (it could have changed any of it), and at
// least every policyReuse otherwise. The sandbox resolves its roots and
// mounts again at every run whatever is reused here.
const policyReuse = 10 * time.Second

// builtPolicy is the policy built for one configuration and workspace.
type builtPolicy struct {
	key     string // the settings and workspace folders it was built for
	at      time.Time
	policy  approvals.Policy
	sandbox approvals.Sandbox
	network sandbox.NetworkMode
}

// builtPolicy returns the policy for cfg and the current workspace folders,
// building it unless the last one was built for the same.
func (s *Server) builtPolicy(cfg config.Config) (*builtPolicy, error) {
	roots := s.workspaceRoots()
	key := fmt.Sprintf("%#v\x00%q", cfg, roots)
	st := s.approvalState()
	st.mu.Lock()
	b := st.policy
	st.mu.Unlock()
	if b != nil && b.key == key && time.Since(b.at) < policyReuse {
		return b, nil
	}
	policy, err := approvals.ParsePolicy(cfg.ApprovalPolicy, cfg.Granular)
	if err != nil {
		return nil, err
	}
	// The sandbox is the workspace's, the same for every command.
	sbPolicy, err := sandboxPolicy(cfg, roots)
	if err != nil {
		return nil, fmt.Errorf("sandbox settings: %w", err)
	}
	sb, err := approvals.SandboxFor(sbPolicy)
	if err != nil {
		return nil, err
	}
	// Clipped: a caller that appends gets its own copy, never the shared one.
	sb.Workspace, sb.WritableRoots, sb.ProtectedPaths = slices.Clip(sb.Workspace), slices.Clip(sb.WritableRoots), slices.Clip(sb.ProtectedPaths)
	b = &builtPolicy{key: key, at: time.Now(), policy: policy, sandbox: sb, network: sbPolicy.NetworkMode()}
	st.mu.Lock()
	st.policy = b
	st.mu.Unlock()
	return b, nil
}

// forgetPolicy makes the next command build the policy again.
func (s *Server) forgetPolicy() {
	st := s.approvalState()
	st.mu.Lock()
	st.policy = nil
	st.mu.Unlock()
}

// forgetAfterUnsandboxed is the orchestrator's runner: after a command ran
// without the sandbox, the policy is built again for the next one.
type forgetAfterUnsandboxed struct {
	s *Server
	*approvals.SandboxRunner
}

func (r *forgetAfterUnsandboxed) Run(ctx context.Context, spec approvals.RunSpec) (approvals.RunResult, error) {
	if spec.Unsandboxed {
		defer r.s.forgetPolicy()
	}
	defer jobs.WatchRun(ctx, &spec)()
	return r.SandboxRunner.Run(ctx, spec)
}
