package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/protect"
)

// doctorRoots are the configured writable roots and where protected paths
// a command creates are kept.
type doctorRoots struct {
	Configured []string `json:"configured"`
	// Skipped are configured roots that do not exist: commands run without
	// them (as in Codex), so a typo is easy to miss.
	Skipped    []string `json:"skipped"`
	Quarantine string   `json:"quarantine"`
	// ScanCut are the roots whose last scan for nested repositories
	// stopped at its bound: a repository there Warden never found is not
	// held read-only.
	ScanCut []string `json:"scan_cut"`
	// HomeWritable are home_writable's entries: in a root that is or holds
	// the home directory, every other dot-entry at its top is read-only.
	HomeWritable []string `json:"home_writable"`
	// HoldsHome are the configured roots that are or hold the home
	// directory.
	HoldsHome []string `json:"holds_home"`
	Error     string   `json:"error,omitempty"`
}

func rootsReport() doctorRoots {
	r := doctorRoots{Configured: []string{}, Skipped: []string{}, Quarantine: protect.QuarantineDir(), ScanCut: protect.ScanCutRoots()}
	cfg, err := config.Load(config.File())
	if err != nil {
		r.Error = "the config does not load: " + err.Error()
		return r
	}
	used, missing := config.WritableRoots(cfg)
	r.Configured = append(r.Configured, used...)
	r.Skipped = append(r.Skipped, missing...)
	r.HomeWritable = append([]string{}, cfg.HomeWritable...)
	r.HoldsHome = []string{}
	if home, err := os.UserHomeDir(); err == nil {
		for i, c := range config.ExpandHome(used) {
			if rel, err := filepath.Rel(c, home); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				r.HoldsHome = append(r.HoldsHome, used[i])
			}
		}
	}
	return r
}

func printRoots(w io.Writer, r doctorRoots) {
	for _, c := range r.ScanCut {
		fmt.Fprintf(w, "\nthe last scan of %s for nested repositories and protected names stopped at its bound: those found before stay read-only, one Warden never found there is writable by sandboxed commands\n", c)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\nwritable roots: unknown: %s\n", r.Error)
		return
	}
	fmt.Fprintln(w, "\nwritable roots (writable_roots in config.toml), besides the workspace, $TMPDIR and /tmp:")
	if len(r.Configured) == 0 && len(r.Skipped) == 0 {
		fmt.Fprintln(w, "  - none configured")
	}
	for _, c := range r.Configured {
		fmt.Fprintf(w, "  - %s\n", c)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  - %s: does not exist, skipped\n", s)
	}
	for _, h := range r.HoldsHome {
		fmt.Fprintf(w, "  %s holds your home directory: its dot-entries stay read-only there\n", h)
	}
	allowed := "none (home_writable in config.toml)"
	if len(r.HomeWritable) > 0 {
		allowed = strings.Join(r.HomeWritable, ", ")
	}
	fmt.Fprintf(w, "in a workspace or root that is or holds the home directory, every dot-entry at its top is read-only and one a command creates there is moved away, except: %s\n", allowed)
	fmt.Fprintln(w, "every directory on PATH inside a writable root is read-only")
	fmt.Fprintf(w, "protected names a command creates (.git, .envrc, .vscode, ...) are moved to %s and reported\n", r.Quarantine)
}
