package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// readFlags are the read-policy flags of exec, run and policy check; they
// add to config.toml's read_deny, read_allow and readable_roots and
// replace its read_access.
type readFlags struct {
	access        string
	deny, allow   stringList
	readableRoots stringList
}

func (f *readFlags) register(fs *flag.FlagSet) {
	*f = readFlags{}
	f.define(fs)
}

// define declares the flags on fs over f's current values.
func (f *readFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.access, "read-access", f.access, "deny-secrets (hide credential stores), restricted (system, toolchains, workspace and --readable-root only; Linux) or full (default: read_access from config.toml, else deny-secrets)")
	fs.Var(&f.deny, "read-deny", "a path or glob the sandbox hides, besides the built-in credential stores (repeatable)")
	fs.Var(&f.allow, "read-allow", "a path the sandbox shows although the deny list hides it (repeatable)")
	fs.Var(&f.readableRoots, "readable-root", "a directory restricted read access shows (repeatable)")
}

// apply fills in p's read policy from the config and the flags.
func (f *readFlags) apply(p *sandbox.Policy, cfg config.Config) error {
	access := cfg.ReadAccess
	if f.access != "" {
		access = f.access
	}
	a, err := sandbox.ParseReadAccess(access)
	if err != nil {
		return fmt.Errorf("--read-access: %w", err)
	}
	abs := func(paths []string) []string {
		out := config.ExpandHome(paths)
		for i, r := range out {
			if v, err := filepath.Abs(r); err == nil {
				out[i] = v
			}
		}
		return out
	}
	p.Reads = sandbox.ReadPolicy{
		Access:        a,
		Deny:          append(config.ReadDeny(cfg), abs(f.deny)...),
		Allow:         append(config.ExpandHome(cfg.ReadAllow), abs(f.allow)...),
		ReadableRoots: append(config.ExpandHome(cfg.ReadableRoots), abs(f.readableRoots)...),
	}
	return p.Validate()
}
