package sandbox

import (
	"os/exec"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/seatbelt"
)

func sandboxName() string { return "seatbelt" }

// launch wraps sandboxed commands in sandbox-exec with a generated profile.
func (p *Process) launch(c Command, path string, env []string) error {
	if !c.Policy.Sandboxed() {
		return p.startDirect(c, path, env)
	}
	roots, err := p.writableRoots(c.Policy)
	if err != nil {
		return refuse("%v", err)
	}
	protect.ScanRepos(roots, env)
	protect.SplitGitDirs(roots)
	todos := protect.WatchTodos(roots)
	p.protect = func() []Removed { return todos.Disarm(c.Cwd) }
	port, env, err := p.askNetwork(c, env)
	if err != nil {
		return err
	}
	profile, params := SeatbeltProfile(c.Policy, roots, port)
	var named []HiddenPath
	for _, d := range c.Policy.ReadDenyPatterns() {
		named = append(named, HiddenPath{Path: d, Target: pathmemo.ResolveExisting(d)})
	}
	p.secrets = secretNames(c.Policy, named)
	argv := seatbelt.Argv(profile, params, path, c.Argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	p.kind = "seatbelt"
	return p.startCmd(cmd, c, env)
}

func askRunsOffline() bool { return false }
