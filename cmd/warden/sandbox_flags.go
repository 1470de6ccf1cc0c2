package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// sandboxFlags are the workspace and sandbox flags `warden exec` and
// `warden run` share; config.toml supplies what they leave unset.
type sandboxFlags struct {
	cwd           string
	mode          string
	network       networkFlag
	writableRoots stringList
	reads         readFlags
}

func (f *sandboxFlags) register(fs *flag.FlagSet, cwdUsage, networkUsage, rootUsage string) {
	*f = sandboxFlags{}
	fs.StringVar(&f.cwd, "cwd", "", cwdUsage)
	fs.StringVar(&f.mode, "sandbox", "", "read-only, workspace-write or danger-full-access (default: sandbox_mode from config.toml)")
	fs.Var(&f.network, "network", networkUsage)
	fs.Var(&f.writableRoots, "writable-root", rootUsage)
	f.reads.register(fs)
}

// resolve returns the workspace root (--cwd, default the current directory;
// absolute, links resolved, an existing directory) and the sandbox policy,
// whose workspace it is. Its errors are about the command line.
func (f *sandboxFlags) resolve(cfg config.Config) (string, sandbox.Policy, error) {
	return f.resolveWith(cfg, pathmemo.New())
}

// resolveWith is resolve looking paths up through memo, which the caller
// may share with the checks of the one run the policy is for
// (sandbox.Policy.WithSetupMemo).
func (f *sandboxFlags) resolveWith(cfg config.Config, memo *pathmemo.Memo) (string, sandbox.Policy, error) {
	cwd, err := resolveCwd(f.cwd)
	if err != nil {
		return "", sandbox.Policy{}, fmt.Errorf("--cwd: %w", err)
	}
	mode := f.sandboxMode(cfg)
	if mode == string(sandbox.External) {
		return "", sandbox.Policy{}, fmt.Errorf("--sandbox external is for callers inside another sandbox; use read-only, workspace-write or danger-full-access")
	}
	configured, missing := config.WritableRoots(cfg)
	for _, m := range missing {
		fmt.Fprintf(os.Stderr, "warden: writable root %s (writable_roots in config.toml) does not exist: skipped\n", m)
	}
	roots := append(configured, f.writableRoots...)
	for i, r := range roots {
		if abs, err := filepath.Abs(r); err == nil {
			roots[i] = abs
		}
	}
	policy, err := sandbox.NewPolicy(mode, string(f.network.or(cfg.Network)), roots)
	policy.Workspace = []string{cwd}
	policy.ProtectedPaths = config.ProtectedPathsMemo(memo, cfg, cwd)
	policy.HomeWritable = cfg.HomeWritable
	policy.Caches = toolcache.Caches{Root: config.ToolchainCaches(), MaxSize: cfg.CacheLimit()}
	if err == nil {
		err = f.reads.apply(&policy, cfg)
	}
	return cwd, policy, err
}

// sandboxMode is --sandbox, else sandbox_mode from config.toml.
func (f *sandboxFlags) sandboxMode(cfg config.Config) string {
	if f.mode != "" {
		return f.mode
	}
	return cfg.SandboxMode
}

// startHelper begins the sandbox helper's start (sandbox.StartHelper) as
// soon as the configuration is read: it needs only the mode and the
// network, and the rest of the policy (the protected paths, the roots) is
// resolved meanwhile. A command line resolve then rejects only wastes it.
func (f *sandboxFlags) startHelper(cfg config.Config) {
	mode := f.sandboxMode(cfg)
	if mode == string(sandbox.External) {
		return
	}
	if pol, err := sandbox.NewPolicy(mode, string(f.network.or(cfg.Network)), nil); err == nil {
		sandbox.StartHelper(pol, "")
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// networkFlag is --network (on) or --network=off|ask|on; it overrides
// network_access from config.toml.
type networkFlag struct{ mode config.NetworkAccess }

func (n *networkFlag) String() string   { return string(n.mode) }
func (n *networkFlag) IsBoolFlag() bool { return true }

func (n *networkFlag) Set(v string) error {
	m, err := config.ParseNetworkAccess(v)
	if err != nil || m == "" {
		return fmt.Errorf("want off, ask or on (--network alone means on)")
	}
	n.mode = m
	return nil
}

// or is the flag's mode, or cfg's network_access when the flag is unset.
func (n networkFlag) or(cfg config.NetworkAccess) config.NetworkAccess { return n.mode.Or(cfg) }

// effectiveNetwork is the network a sandbox mode gets from the flag, then
// config.toml, then the mode's default.
func effectiveNetwork(mode string, n config.NetworkAccess) (sandbox.NetworkMode, error) {
	return sandbox.ResolveNetwork(mode, string(n))
}
