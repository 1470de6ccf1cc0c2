package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/seatbelt"
)

// doctorReads is the read policy as config.toml sets it: what it hides,
// what is there to hide now, and how.
type doctorReads struct {
	Access  string   `json:"read_access"`
	How     string   `json:"how"`
	Denied  []string `json:"denied"`            // the patterns, built-in then read_deny
	Present []string `json:"present"`           // what exists now and is hidden
	Allowed []string `json:"allowed,omitempty"` // read_allow
	Error   string   `json:"error,omitempty"`
}

func readRule(mechanism string) doctorReads {
	r := doctorReads{Denied: []string{}, Present: []string{}}
	cfg, err := config.Load(config.File())
	if err != nil {
		r.Error = "the config does not load: " + err.Error()
		return r
	}
	var p sandbox.Policy
	if err := (&readFlags{}).apply(&p, cfg); err != nil {
		r.Error = err.Error()
		return r
	}
	r.Access = string(p.Reads.Access)
	home, _ := os.UserHomeDir()
	show := func(path string) string {
		if home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
			return "~" + strings.TrimPrefix(path, home)
		}
		return path
	}
	for _, d := range p.ReadDenyPatterns() {
		r.Denied = append(r.Denied, show(d))
	}
	for _, a := range p.Reads.Allow {
		r.Allowed = append(r.Allowed, show(a))
	}
	hidden, err := p.HiddenPaths(nil)
	if err != nil {
		r.Error = err.Error()
	}
	for _, h := range hidden {
		r.Present = append(r.Present, show(h.Path))
	}
	switch {
	case p.Reads.Access == sandbox.ReadFull:
		r.How = "nothing is hidden: sandboxed commands read everything the user can"
	case p.Reads.Access == sandbox.ReadRestricted && runtime.GOOS == "darwin":
		r.How = "the Seatbelt profile allows reading only " + strings.Join(seatbelt.PlatformReadable, " ") + ", the home's shell and git configuration and toolchains, the workspace, the writable roots and readable_roots (metadata anywhere); the credential stores inside them are denied as under deny-secrets"
	case p.Reads.Access == sandbox.ReadRestricted:
		r.How = "Landlock allows reads only of " + strings.Join(p.RestrictedReadable(), " ") + ", the workspace and the writable roots; the credential stores inside them are hidden as under deny-secrets"
	case runtime.GOOS == "darwin":
		r.How = "deny file-read* rules in the Seatbelt profile, for each path as written and resolved"
	case mechanism == "linux":
		r.How = "in the sandbox's mount namespace: an empty mode-000 read-only tmpfs over each directory, an empty read-only file over each file (its resolved target; a path behind a link the command could rewrite is refused)"
	case mechanism == "linux-landlock":
		r.How = "without a mount namespace, by Landlock rules made at each start around those present: every other entry of each directory on the way to one is readable, the directory itself only listed; a run whose writable root (the workspace) holds one is refused, since Landlock cannot take a path out of a root: open a narrower workspace, or read_access = \"full\""
	default:
		r.How = "cannot be enforced here (no mount namespace, no Landlock): a sandboxed command is refused while any of these exists, unless read_access = \"full\""
	}
	return r
}

func printReads(w io.Writer, r doctorReads) {
	if r.Error != "" {
		fmt.Fprintf(w, "\nreads: unknown: %s\n", r.Error)
		return
	}
	fmt.Fprintf(w, "\nreads: read_access = %q — %s\n", r.Access, r.How)
	if r.Access == string(sandbox.ReadFull) {
		return
	}
	fmt.Fprintf(w, "  - hidden when present: %s\n", strings.Join(r.Denied, " "))
	if len(r.Present) == 0 {
		fmt.Fprintln(w, "  - present now: none")
	} else {
		fmt.Fprintf(w, "  - present now, so hidden: %s\n", strings.Join(r.Present, " "))
	}
	if len(r.Allowed) > 0 {
		fmt.Fprintf(w, "  - read_allow shows again: %s\n", strings.Join(r.Allowed, " "))
	}
	if r.Access == string(sandbox.ReadDenySecrets) {
		// The policy's choice, not a gap of this machine.
		fmt.Fprintln(w, "  - every other file this user can read stays readable to commands (read_access = \"restricted\" limits reads to the toolchains, the workspace and the roots)")
	}
}
