package sandbox

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wardenhq/warden/sandbox/linux"
)

// Layer is one sandbox layer and what it does on this machine.
type Layer struct {
	Name     string   `json:"name"`
	Enforced bool     `json:"enforced"`
	Detail   string   `json:"detail"`
	Covers   []string `json:"covers,omitempty"`
}

// Report is what this machine's sandbox enforces for a workspace-write,
// no-network policy, layer by layer, and what it cannot.
type Report struct {
	Kernel linux.KernelInfo `json:"kernel"`
	// Namespaces maps user, mount, pid, net and ipc to "" when this process
	// can create one (measured by creating it), else to why not.
	Namespaces  map[string]string `json:"namespaces"`
	Mechanism   string            `json:"mechanism"` // what Run would use: linux, linux-landlock, seatbelt, none
	Layers      []Layer           `json:"layers"`
	NotEnforced []string          `json:"not_enforced"`
	// SelfTest is the result of running a command through the sandbox.
	SelfTest string `json:"self_test"`
	Refused  string `json:"refused,omitempty"` // why sandboxed commands would be refused
}

// Diagnose inspects the kernel and runs `true` in the sandbox with helper
// (empty: this executable) to show that the layers really apply.
func Diagnose(ctx context.Context, helper string) Report {
	r := Report{Kernel: linux.Probe(), Namespaces: linux.ProbeNamespaces("")}
	ws, err := os.MkdirTemp("", "warden-doctor-")
	if err == nil {
		defer os.RemoveAll(ws)
		start := time.Now()
		res, err := Run(ctx, Command{
			Argv:   []string{"/bin/sh", "-c", "echo x > ok && ! echo x > /warden-doctor-denied 2>/dev/null"},
			Cwd:    ws,
			Policy: Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true},
			Helper: helper,
		})
		switch {
		case err != nil:
			r.Refused = err.Error()
			r.SelfTest = "refused: " + err.Error()
		case res.ExitCode != 0:
			r.SelfTest = fmt.Sprintf("failed (exit %d): %s", res.ExitCode, res.Output)
			r.Mechanism = res.Sandbox
		default:
			r.SelfTest = fmt.Sprintf("ok: a write inside the workspace worked and one outside was denied (%s)", time.Since(start).Round(time.Millisecond))
			r.Mechanism = res.Sandbox
			r.NotEnforced = res.NotEnforced
		}
	}
	r.Layers = layersFor(r)
	r.NotEnforced = append(r.NotEnforced, residualGaps(r)...)
	return r
}
