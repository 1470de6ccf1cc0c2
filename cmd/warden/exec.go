package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// exitRefused is the exit status when Warden would not run the command.
const exitRefused = 77

// execFlags are `warden exec`'s flags. The approval flags register
// themselves on the same struct's flag set (see execFlags.register).
type execFlags struct {
	cwd           string
	sandbox       string
	network       bool
	writableRoots stringList
	timeout       time.Duration
	approval      approvalExecFlags
}

var execOpts execFlags

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (f *execFlags) register(fs *flag.FlagSet) {
	*f = execFlags{}
	fs.StringVar(&f.cwd, "cwd", "", "working directory, also the first writable root (default: the current directory)")
	fs.StringVar(&f.sandbox, "sandbox", "", "read-only, workspace-write or danger-full-access (default: sandbox_mode from config.toml)")
	fs.BoolVar(&f.network, "network", false, "allow network access (default: network_access from config.toml)")
	fs.Var(&f.writableRoots, "writable-root", "an extra directory the command may write (repeatable)")
	fs.DurationVar(&f.timeout, "timeout", 0, "kill the command and everything it started after this long (e.g. 30s; default: none)")
	f.approval.register(fs)
}

func init() {
	register(&command{
		name:    "exec",
		summary: "run one command through Warden's approval policy and sandbox",
		usage:   "exec [--cwd D] [--sandbox MODE] [--network] [--writable-root D]... [--approval X] [--rules F]... [--yes|--deny] -- CMD ARGS...",
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
	mode := cfg.SandboxMode
	if execOpts.sandbox != "" {
		mode = execOpts.sandbox
	}
	if mode == string(sandbox.External) {
		return usageError(env, "exec", "--sandbox external is for callers inside another sandbox; use read-only, workspace-write or danger-full-access")
	}
	roots := append(append([]string(nil), cfg.WritableRoots...), execOpts.writableRoots...)
	for i, r := range roots {
		if abs, err := absPath(r); err == nil {
			roots[i] = abs
		}
	}
	policy, err := sandbox.NewPolicy(mode, cfg.Network || execOpts.network, roots)
	if err != nil {
		return usageError(env, "exec", "%v", err)
	}
	cwd := execOpts.cwd
	if cwd != "" {
		if cwd, err = absPath(cwd); err != nil {
			return usageError(env, "exec", "--cwd: %v", err)
		}
	}
	code := runApproved(ctx, env, cfg, args, cwdOr(cwd), policy, execOpts.timeout, execOpts.approval)
	// Leave no placeholder for a protected path behind in the workspace.
	sandbox.FlushPlaceholders()
	return code
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	return filepath.Abs(p)
}

func cwdOr(cwd string) string {
	if cwd != "" {
		return cwd
	}
	wd, _ := os.Getwd()
	return wd
}
