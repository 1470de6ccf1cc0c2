//go:build unix && !linux && !darwin

package sandbox

import "runtime"

func sandboxName() string { return "none" }

// launch runs unsandboxed policies directly and refuses sandboxed ones:
// this system has no sandbox Warden can drive.
func (p *Process) launch(c Command, path string, env []string) error {
	if c.Policy.Sandboxed() {
		return refuse("Warden has no sandbox for %s; only danger-full-access or external can run here", runtime.GOOS)
	}
	return p.startDirect(c, path, env)
}

func askRunsOffline() bool { return false }
