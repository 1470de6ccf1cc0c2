//go:build unix && !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// startDirect starts argv (possibly wrapped, as sandbox-exec does) in its
// own process group, which is what a timeout kills.
func (p *Process) startDirect(c Command, path string, env []string) error {
	cmd := exec.Command(path)
	cmd.Args = append([]string{c.Argv[0]}, c.Argv[1:]...)
	return p.startCmd(cmd, c, env)
}

func (p *Process) startCmd(cmd *exec.Cmd, c Command, env []string) error {
	cmd.Env = env
	cmd.Dir = c.Cwd
	cmd.Stdout = p.cap.writer(Stdout)
	cmd.Stderr = p.cap.writer(Stderr)
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	p.cmd = cmd
	if p.kind == "" {
		p.kind = "none"
	}
	p.gaps = append(p.gaps, "processes that leave the command's process group (setsid) survive a timeout: no pid namespace on this system")
	return nil
}

// killTree kills the command's process group.
func (p *Process) killTree() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}
