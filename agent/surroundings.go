package agent

import (
	"context"
	"os"
	"time"

	"github.com/wardenhq/warden/sandbox"
)

// Verdict is what became of a tool call that needed someone's consent.
type Verdict int

const (
	// Ran: the command ran or the patch was applied (perhaps after approval).
	Ran Verdict = iota
	// Denied: the user or policy refused; the model is told and the turn goes on.
	Denied
	// Stopped: the user chose "Deny and stop"; the turn ends.
	Stopped
	// Forbidden: policy forbids it outright; asking again will not help.
	Forbidden
)

func (v Verdict) String() string {
	switch v {
	case Ran:
		return "ran"
	case Denied:
		return "denied"
	case Stopped:
		return "denied and stopped"
	case Forbidden:
		return "forbidden"
	}
	return "unknown"
}

// Command is a shell tool call, validated.
type Command struct {
	Argv []string
	// Dir is absolute.
	Dir     string
	Timeout time.Duration
	// Escalate is sandbox_permissions = require_escalated: the model asks to
	// run outside the sandbox and must justify it.
	Escalate      bool
	Justification string
	// PrefixRule is the argv prefix the model proposes the user always allow.
	PrefixRule []string
	// Grant is sandbox_permissions = with_additional_permissions: what the
	// model asks to add to the sandbox (paths as it wrote them).
	Grant sandbox.Grant
}

// CommandResult is what happened to a Command.
type CommandResult struct {
	Verdict Verdict
	// Reason says why it was denied or forbidden, in words for the model.
	Reason    string
	ExitCode  int
	Output    string
	Sandboxed bool
	// Granted says what the run could do beyond the sandbox, in words
	// ("write access to ~/.cache/pip"), or "".
	Granted  string
	TimedOut bool
	Duration time.Duration
	// NetworkRefused says which connections Warden's proxy refused during
	// the run and why (the output carries them too, for the model).
	NetworkRefused []string
	// Changed says what the run changed in the workspace ("deleted 3 files
	// under src/; modified README.md"), recorded for undo; "" for nothing.
	Changed string
}

// CommandRunner runs commands through policy, approval and the sandbox
// (the approvals orchestrator). An error means the command could not be
// run at all (for example, the sandbox cannot be enforced here).
type CommandRunner interface {
	RunCommand(ctx context.Context, cmd Command) (CommandResult, error)
}

// PatchResult is what became of an apply_patch call.
type PatchResult struct {
	Verdict Verdict
	Reason  string
	// Summary says what was actually applied, read back after the user's
	// review (the user may have accepted only part of it).
	Summary string
}

// PatchApplier takes a patch through parsing, approval and the workspace
// (editor edits or disk). An error means the patch was not applied: it did
// not parse or its hunks do not match; the text says which.
type PatchApplier interface {
	ApplyPatch(ctx context.Context, input, dir string) (PatchResult, error)
}

// FileReader reads files as the user sees them: the editor's buffer when a
// file is open there, the disk otherwise.
type FileReader interface {
	ReadFile(path string) ([]byte, error)
}

// DiskFiles reads from the disk only (terminal mode).
type DiskFiles struct{}

func (DiskFiles) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Buffer implements BufferReader: no file is open in an editor.
func (DiskFiles) Buffer(string) ([]byte, bool, error) { return nil, false, nil }

// PlanStep is one entry of update_plan.
type PlanStep struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

// Observer follows a session: the editor shows it as $/progress, the
// terminal as status lines. Calls come from the session's goroutine.
type Observer interface {
	// Step reports what the agent is doing now.
	Step(text string)
	// Plan reports the agent's current plan.
	Plan(plan []PlanStep)
}

type nopObserver struct{}

func (nopObserver) Step(string)     {}
func (nopObserver) Plan([]PlanStep) {}
