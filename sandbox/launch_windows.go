package sandbox

import (
	"fmt"
	"os/exec"
	"time"
)

// noSandboxOnWindows says why a sandboxed mode cannot run a command here and
// what the user can choose instead.
const noSandboxOnWindows = `Warden has no OS sandbox on Windows yet, so sandbox_mode "read-only" and "workspace-write" cannot run commands here. ` +
	`Choose sandbox_mode = "danger-full-access" (--sandbox danger-full-access) with approval_policy = "untrusted" (--approval untrusted): ` +
	`commands then run unsandboxed, and every one not known to be safe is asked about first (docs/windows-sandbox.md)`

func sandboxName() string { return "none" }

// launch runs unsandboxed policies directly and refuses sandboxed ones: it
// never runs a command that was meant to be confined without confining it.
func (p *Process) launch(c Command, path string, env []string) error {
	if c.Policy.Sandboxed() {
		return refuse("%s", noSandboxOnWindows)
	}
	return p.startDirect(c, path, env)
}

// startDirect starts argv as it is, unconfined.
func (p *Process) startDirect(c Command, path string, env []string) error {
	cmd := exec.Command(path)
	cmd.Args = append([]string{c.Argv[0]}, c.Argv[1:]...)
	cmd.Env = env
	cmd.Dir = c.Cwd
	cmd.Stdout = p.cap.writer(Stdout)
	cmd.Stderr = p.cap.writer(Stderr)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	p.cmd = cmd
	if p.kind == "" {
		p.kind = "none"
	}
	p.gaps = append(p.gaps, "processes the command starts survive a timeout: on Windows only the command itself is killed")
	return nil
}

// killTree kills the command (a job object would take its children too:
// see docs/windows-sandbox.md).
func (p *Process) killTree() { p.cmd.Process.Kill() }

func askRunsOffline() bool { return false }
