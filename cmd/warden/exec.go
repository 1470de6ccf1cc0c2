package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/sandbox"
)

// exitRefused is the exit status when Warden would not run the command.
const exitRefused = 77

// execFlags are `warden exec`'s flags. The approval flags register
// themselves on the same struct's flag set (see execFlags.register).
type execFlags struct {
	sandboxFlags
	timeout  time.Duration
	approval approvalExecFlags
}

var execOpts execFlags

func (f *execFlags) register(fs *flag.FlagSet) {
	*f = execFlags{}
	f.sandboxFlags.register(fs,
		"the workspace: where the command runs and its first writable root (default: the current directory)",
		"the commands' network: --network=off, ask (through Warden's proxy, asked per host) or on; --network alone means on (default: network_access from config.toml)",
		"an extra directory the command may write (repeatable)")
	fs.DurationVar(&f.timeout, "timeout", 0, "kill the command and everything it started after this long (e.g. 30s; default: none)")
	f.approval.register(fs)
	f.approval.grants.register(fs)
}

func init() {
	register(&subcommand{
		name:    "exec",
		summary: "run one command through Warden's approval policy and sandbox",
		usage:   "exec [--cwd D] [--sandbox MODE] [--network[=off|ask|on]] [--writable-root D]... [--approval X] [--rules F]... [--grant-write D]... [--grant-read P]... [--yes|--deny] -- CMD ARGS...",
		flags:   execOpts.register,
		run:     runExec,
	})
}

func runExec(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		return usageError(env, "exec", "no command given: put it after --")
	}
	cfg, err := config.Load(config.File())
	if err != nil {
		fmt.Fprintf(env.stderr, "warden exec: %v\n", err)
		return exitUsage
	}
	execOpts.startHelper(cfg)
	// One command runs: the checks before its decision (the protected
	// paths, the roots of PrepareRun and of the approvals' view) share one
	// memo of the file system; Start resolves again with its own.
	memo := pathmemo.New()
	cwd, policy, err := execOpts.resolveWith(cfg, memo)
	policy = policy.WithSetupMemo(memo)
	if err != nil {
		return usageError(env, "exec", "%v", err)
	}
	recoverInterrupted(env, "exec", cwd)
	// The helper starts and the writable roots are scanned while the rules,
	// the policy and the audit log are loaded.
	sandbox.PrepareRun(policy, "")
	return runApproved(ctx, env, cfg, args, cwd, policy, execOpts.timeout, execOpts.approval)
}
