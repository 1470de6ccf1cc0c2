package approvals

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// AskForApproval is when the user is asked before a command runs. The names
// follow Codex's approval_policy values so a Codex user's config carries over.
type AskForApproval int

const (
	// OnRequest runs commands in the sandbox without asking and asks when a
	// command wants to leave it, is dangerous, or is high risk. The default.
	OnRequest AskForApproval = iota
	// Untrusted asks for everything that is not known to be safe.
	Untrusted
	// OnFailure runs everything sandboxed and asks only to retry a command
	// the sandbox blocked without it.
	OnFailure
	// Never never asks: what would need approval is refused instead, and
	// everything else runs in the sandbox.
	Never
	// Granular behaves like OnRequest but automatically rejects the prompt
	// categories chosen in Policy.Reject.
	Granular
)

var askNames = map[AskForApproval]string{
	OnRequest: "on-request",
	Untrusted: "untrusted",
	OnFailure: "on-failure",
	Never:     "never",
	Granular:  "granular",
}

func (a AskForApproval) String() string {
	if s, ok := askNames[a]; ok {
		return s
	}
	return fmt.Sprintf("AskForApproval(%d)", int(a))
}

// ParseAskForApproval reads a policy name as written in config.toml or on the
// command line.
func ParseAskForApproval(s string) (AskForApproval, error) {
	for a, name := range askNames {
		if name == s {
			return a, nil
		}
	}
	return OnRequest, fmt.Errorf("approval policy %q: want untrusted, on-failure, on-request, never or granular", s)
}

// RejectCategories are the prompt categories the granular policy turns into
// refusals without asking.
type RejectCategories struct {
	SandboxEscalation bool // "retry without the sandbox?" and require_escalated requests
	Rules             bool // prompts caused by a prompt rule
	Patches           bool // patch approvals
	Network           bool // a sandboxed command's connection to a new host
}

// Policy is the approval side of the user's settings.
type Policy struct {
	Ask    AskForApproval
	Reject RejectCategories // only consulted under Granular
}

// ParsePolicy builds a Policy from the config values approval_policy and
// granular_reject.
func ParsePolicy(ask string, granular []string) (Policy, error) {
	a, err := ParseAskForApproval(ask)
	if err != nil {
		return Policy{}, err
	}
	p := Policy{Ask: a}
	for _, g := range granular {
		switch g {
		case "sandbox_escalation":
			p.Reject.SandboxEscalation = true
		case "rules":
			p.Reject.Rules = true
		case "patches":
			p.Reject.Patches = true
		case "network":
			p.Reject.Network = true
		default:
			return Policy{}, fmt.Errorf("granular_reject %q: want sandbox_escalation, rules, patches or network", g)
		}
	}
	return p, nil
}

// rejects reports whether a prompt of the given category is refused without
// asking under this policy.
func (p Policy) rejects(c promptCategory) bool {
	if p.Ask == Never {
		return true
	}
	if p.Ask != Granular {
		return false
	}
	switch c {
	case categoryEscalation:
		return p.Reject.SandboxEscalation
	case categoryRules:
		return p.Reject.Rules
	case categoryPatches:
		return p.Reject.Patches
	case categoryNetwork:
		return p.Reject.Network
	}
	return false
}

type promptCategory int

const (
	categoryHeuristics promptCategory = iota // safety / risk heuristics
	categoryRules
	categoryEscalation
	categoryPatches
	categoryNetwork
	categoryUnconfined // untrusted where Warden has no OS sandbox: every command asks
)

// unconfinedPlatform is true where Warden has no OS sandbox (Windows):
// there the known-safe list alone lets nothing run unasked under untrusted.
var unconfinedPlatform = runtime.GOOS == "windows"

// wantsRetryPrompt reports whether, after the sandbox blocked a command, the
// policy lets Warden ask to run it again without the sandbox.
func (p Policy) wantsRetryPrompt(patch bool) bool {
	switch p.Ask {
	case Untrusted, OnFailure:
		return true
	case OnRequest:
		// Codex asks the model to re-issue the command with a justification;
		// a patch has no such path, so it is asked about directly.
		return patch
	case Granular:
		return !p.Reject.SandboxEscalation
	}
	return false
}

// ReviewDecision is the user's answer to an approval prompt.
type ReviewDecision int

const (
	// Denied refuses this request; the agent's turn goes on.
	Denied ReviewDecision = iota
	// Approved runs this request once.
	Approved
	// ApprovedForSession runs it and remembers the approval for identical
	// requests until the session ends.
	ApprovedForSession
	// ApprovedWithAmendment runs it and persists an allow rule for the
	// proposed command prefix.
	ApprovedWithAmendment
	// Abort refuses and stops the agent's turn.
	Abort
	// ApprovedUnsandboxed runs it once with no sandbox at all: the separate
	// choice a retry dialog that offers a grant keeps (grant.go).
	ApprovedUnsandboxed
)

func (d ReviewDecision) String() string {
	switch d {
	case Approved:
		return "approved"
	case ApprovedForSession:
		return "approved-for-session"
	case ApprovedWithAmendment:
		return "approved-with-amendment"
	case Denied:
		return "denied"
	case Abort:
		return "abort"
	case ApprovedUnsandboxed:
		return "approved-unsandboxed"
	}
	return fmt.Sprintf("ReviewDecision(%d)", int(d))
}

// IsApproval reports whether the decision lets the request run.
func (d ReviewDecision) IsApproval() bool {
	return d == Approved || d == ApprovedForSession || d == ApprovedWithAmendment || d == ApprovedUnsandboxed
}

// SandboxMode is how much of the filesystem a sandboxed command may write.
type SandboxMode string

const (
	ReadOnly         SandboxMode = "read-only"
	WorkspaceWrite   SandboxMode = "workspace-write"
	DangerFullAccess SandboxMode = "danger-full-access"
)

// ParseSandboxMode reads a sandbox mode name.
func ParseSandboxMode(s string) (SandboxMode, error) {
	switch m := SandboxMode(s); m {
	case ReadOnly, WorkspaceWrite, DangerFullAccess:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: want read-only, workspace-write or danger-full-access", s)
}

// Sandbox describes the sandbox a command would run in, as far as approvals
// need to know: what it may write and whether it reaches the network. It is
// the session's, fixed before any request: nothing in a request changes it.
type Sandbox struct {
	Mode SandboxMode
	// Network is the sandbox's network: off, ask (through Warden's proxy)
	// or on; empty is off.
	Network sandbox.NetworkMode
	// Workspace are the session's workspace roots (the editor's workspace
	// folders, the CLI's --cwd), absolute. A command whose working directory
	// is outside them and outside WritableRoots is asked about, or refused.
	Workspace []string
	// WritableRoots is everything workspace-write lets a command write:
	// the workspace, configured roots, $TMPDIR and /tmp; absolute.
	WritableRoots []string
	// ProtectedPaths stay read-only inside the writable roots, and patches
	// to them ask (Warden's own config and state: sandbox.Policy's).
	ProtectedPaths []string
	// HomeWritable are the home's entries that stay writable where a root
	// holds the home directory, carried to the run unchanged.
	HomeWritable []string
	// Reads is the sandbox's read policy, carried to the run unchanged.
	Reads sandbox.ReadPolicy
	// Caches are the sandbox's private toolchain caches, carried to the
	// run unchanged (a sandboxed run only).
	Caches toolcache.Caches
}

// Restricted reports whether the sandbox limits the filesystem at all.
func (s Sandbox) Restricted() bool { return s.Mode != DangerFullAccess }

// String is a short human description, the one session keys use: it names
// the configuration, so a key stays the same whatever this machine enforces.
func (s Sandbox) String() string { return s.describe(false) }

// Describe is String as a dialog shows it, true to what a run gets here:
// under network "ask" where this system refuses the user namespaces the
// proxy needs, runs get no network at all.
func (s Sandbox) Describe() string {
	return s.describe(s.Network == sandbox.NetworkAsk && askRunsOffline())
}

// askRunsOffline is sandbox.AskRunsOffline (a variable for tests).
var askRunsOffline = sandbox.AskRunsOffline

func (s Sandbox) describe(askOffline bool) string {
	var b strings.Builder
	b.WriteString(string(s.Mode))
	if s.Mode == "" {
		b.WriteString(string(WorkspaceWrite))
	}
	switch s.Network {
	case sandbox.NetworkOn:
		b.WriteString(", network")
	case sandbox.NetworkAsk:
		if askOffline {
			b.WriteString(`, no network (network_access "ask" needs user namespaces, which this system refuses)`)
			break
		}
		b.WriteString(", network through the proxy")
	default:
		b.WriteString(", no network")
	}
	if s.Restricted() {
		b.WriteString(", " + s.Reads.Short())
	}
	return b.String()
}
