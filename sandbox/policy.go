package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// Mode says how much of the filesystem a sandboxed command may change.
type Mode string

const (
	// ReadOnly lets the command read everything and write nothing (but /dev/null).
	ReadOnly Mode = "read-only"
	// WorkspaceWrite adds the writable roots: the workspace, extra roots,
	// $TMPDIR and /tmp, minus the protected subpaths. A command's working
	// directory is never one of them by virtue of being its working directory.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess runs the command with no sandbox at all.
	DangerFullAccess Mode = "danger-full-access"
	// External means the caller already runs inside a sandbox that Warden
	// does not control: commands run without another layer.
	External Mode = "external"
)

// ParseMode reads a mode as written in config.toml or on the command line.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case ReadOnly, WorkspaceWrite, DangerFullAccess, External:
		return m, nil
	case "":
		return WorkspaceWrite, nil
	}
	return "", fmt.Errorf("sandbox mode %q: want read-only, workspace-write, danger-full-access or external", s)
}

// ProtectedNames are the entries at the top of every writable root that stay
// read-only, and that a command may not create (one it creates is moved
// away): see sandbox/protect. Every .git deeper in a root is read-only too
// (see protect.ScanRepos).
var ProtectedNames = protect.Names()

// ProtectedSubpaths are protected like ProtectedNames, deeper (mise's
// configs under .config).
var ProtectedSubpaths = protect.Subpaths

// ProtectedRel says whether rel, a path relative to a writable root, is
// or is inside a protected entry (protect.Rel).
func ProtectedRel(rel string) bool { return protect.Rel(rel, os.Getenv) != "" }

// Policy is what a sandboxed command may do. The zero value is a
// workspace-write policy without network.
type Policy struct {
	Mode Mode
	// Network is how the command reaches the network (NetworkOff, the
	// zero value, NetworkAsk or NetworkOn). Under NetworkAsk the Command
	// must carry a Proxy, or the run is refused.
	Network NetworkMode
	// Workspace are the session's workspace roots: the editor's workspace
	// folders, the CLI's --cwd. They are fixed when the session starts and
	// are writable under workspace-write. Where a command runs adds nothing:
	// writable roots never come from a request.
	Workspace []string
	// WritableRoots are extra directories that workspace-write may write
	// (writable_roots in config.toml, --writable-root).
	WritableRoots []string
	// ExcludeTmpdir keeps $TMPDIR out of the writable roots.
	ExcludeTmpdir bool
	// ExcludeSlashTmp keeps /tmp out of the writable roots.
	ExcludeSlashTmp bool
	// ProtectedPaths are absolute directories that stay read-only wherever
	// they fall inside a writable root, whether they exist yet or not:
	// Warden's own configuration and state, the user's git configuration.
	// The caller (which knows where those live) fills them in.
	ProtectedPaths []string
	// HomeWritable are the entries of the home directory (relative to it,
	// home_writable in config.toml) that stay writable where a writable
	// root is or holds it: every other entry at its top whose name starts
	// with "." is read-only there (see protect/home_held.go).
	HomeWritable []string

	// Reads is what the command may read.
	Reads ReadPolicy

	// Caches are the sandbox's private toolchain caches (workspace-write).
	Caches toolcache.Caches

	// Quarantine is where protected paths a command created are moved
	// (absolute); empty means QuarantineDir().
	Quarantine string

	// setup is the memo Roots resolves with before the run's decision
	// (WithSetupMemo); nil: a memo per call.
	setup *pathmemo.Memo
}

// WithSetupMemo returns p whose Roots (and Summary) resolve through m, the
// memo its caller resolved the protected paths with: the checks one
// command's decision makes (PrepareRun, approvals.SandboxFor) then look at
// each path once. Only for the moments before one run's decision: Start
// resolves everything again with its own memo (a prompt may have lasted
// minutes), and a session's policy must not carry one from run to run.
func (p Policy) WithSetupMemo(m *pathmemo.Memo) Policy {
	p.setup = m
	return p
}

// NewPolicy builds a policy from the config strings (config.Config's
// SandboxMode, Network and WritableRoots); an empty network is the mode's
// default (DefaultNetwork). Relative roots are an error: a policy must not
// change meaning with the working directory.
func NewPolicy(mode, network string, writableRoots []string) (Policy, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return Policy{}, err
	}
	n, err := ResolveNetwork(mode, network)
	if err != nil {
		return Policy{}, err
	}
	p := Policy{Mode: m, Network: n, WritableRoots: slices.Clone(writableRoots)}
	return p, p.Validate()
}

// Validate checks the policy's values.
func (p Policy) Validate() error {
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return err
	}
	if n, err := ParseNetworkMode(string(p.Network)); err != nil || (n != p.Network && p.Network != "") {
		return fmt.Errorf("network mode %q: want off, ask or on", p.Network)
	}
	for _, r := range p.Workspace {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("workspace root %q: must be an absolute path", r)
		}
	}
	for _, r := range p.WritableRoots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("writable root %q: must be an absolute path", r)
		}
	}
	for _, r := range p.ProtectedPaths {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("protected path %q: must be an absolute path", r)
		}
	}
	if err := validateHomeWritable(p.HomeWritable); err != nil {
		return err
	}
	if r := p.Caches.Root; r != "" && !filepath.IsAbs(r) {
		return fmt.Errorf("cache root %q: must be an absolute path", r)
	}
	return p.validateReads()
}

func (p Policy) validateReads() error {
	r := p.Reads
	if r.Access != "" {
		if _, err := ParseReadAccess(string(r.Access)); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"read_deny", r.Deny}, {"read_allow", r.Allow}, {"readable_roots", r.ReadableRoots}} {
		for _, r := range list.paths {
			if !filepath.IsAbs(r) {
				return fmt.Errorf("%s %q: must be an absolute path (or start with ~/)", list.name, r)
			}
			if _, err := filepath.Match(r, ""); err != nil {
				return fmt.Errorf("%s %q: %w", list.name, r, err)
			}
		}
	}
	if r.Home != "" && !filepath.IsAbs(r.Home) {
		return fmt.Errorf("home %q: must be an absolute path", r.Home)
	}
	return nil
}

func (p Policy) mode() Mode {
	if p.Mode == "" {
		return WorkspaceWrite
	}
	return p.Mode
}

// Sandboxed reports whether commands under p run inside Warden's sandbox.
func (p Policy) Sandboxed() bool {
	m := p.mode()
	return m == ReadOnly || m == WorkspaceWrite
}

// Roots resolves the writable roots: the workspace, the configured roots,
// $TMPDIR and /tmp. They are the same for every command of a session,
// wherever it runs. The temporary directories are left out when they do not
// exist; the workspace and the configured roots must exist. Nested roots are
// kept: each gets its own protected subpaths.
func (p Policy) Roots() ([]protect.Root, error) {
	if p.setup != nil {
		return p.roots(p.setup)
	}
	return p.roots(pathmemo.New())
}

// roots is Roots with the run's memo of the file system (pathmemo).
func (p Policy) roots(m *pathmemo.Memo) ([]protect.Root, error) {
	if p.mode() != WorkspaceWrite {
		return nil, nil
	}
	var paths []string
	for _, r := range slices.Concat(p.Workspace, p.WritableRoots) {
		rp, err := resolveDir(r, m)
		if err != nil {
			return nil, fmt.Errorf("writable root: %w", err)
		}
		paths = append(paths, rp)
	}
	home := p.homeDir(m)
	paths = append(paths, p.homeWritableRoots(home, paths, m)...)
	worked := slices.Clone(paths) // the directories the user works in
	if !p.ExcludeTmpdir {
		if t := os.Getenv("TMPDIR"); filepath.IsAbs(t) {
			if rp, err := resolveDir(t, m); err == nil {
				paths = append(paths, rp)
			}
		}
	}
	if !p.ExcludeSlashTmp {
		if rp, err := resolveDir("/tmp", m); err == nil {
			paths = append(paths, rp)
		}
	}
	if set := p.cacheSetWith(m); set != "" {
		// Created by Start before the command runs; only its data.
		if rp, err := resolveDir(filepath.Join(set, toolcache.DataDir), m); err == nil {
			paths = append(paths, rp)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	extras := make([]string, 0, len(p.ProtectedPaths))
	var linked []string // as written, where a link on the way resolves elsewhere
	for _, e := range p.ProtectedPaths {
		e = filepath.Clean(e)
		real := m.ResolveExisting(e)
		extras = append(extras, real)
		if real != e {
			linked = append(linked, e)
		}
	}
	roots := make([]protect.Root, 0, len(paths))
	homeRoot := protect.InnermostHolding(paths, home) // holds the home's top once
	for _, rp := range paths {
		if rp == "/" {
			return nil, errors.New("writable root /: use danger-full-access to write everywhere")
		}
		shared := !slices.Contains(worked, rp)
		prot := protect.AtTop(rp, shared, m)
		for _, e := range extras {
			if pathutil.Within(e, rp) {
				return nil, fmt.Errorf("writable root %s is inside %s, which must stay read-only (Warden's own files, the user's git configuration, or startup files the host runs without asking): open a workspace outside it, or use danger-full-access", rp, e)
			}
			if pathutil.Within(rp, e) {
				prot = append(prot, e)
			}
		}
		// The link is what the host follows (~/.bashrc -> dotfiles/bashrc,
		// ~/.config -> dotfiles/config) and what a command could replace:
		// protected as written too, where the guard refuses a link.
		for _, l := range linked {
			if pathutil.Within(rp, l) {
				prot = append(prot, l)
			}
		}
		var held, watch []string
		var top *protect.HomeTop
		if rp == homeRoot {
			held, watch, top = protect.HomeHeld(p.HomeWritable, rp, home, worked, m)
		}
		onPath, linked := protect.PathHeld(rp, worked, m)
		prot = append(append(prot, held...), onPath...)
		slices.Sort(prot)
		roots = append(roots, protect.Root{Path: rp, Shared: shared, Protected: slices.Compact(prot), Home: top, Watched: append(watch, linked...)})
	}
	return roots, nil
}

func resolveDir(p string, m *pathmemo.Memo) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	rp, err := m.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return "", err
	}
	st, err := m.Lstat(rp) // rp has no links left: its Lstat is its Stat
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", p)
	}
	return rp, nil
}

// Summary is a one-line description for approval dialogs, e.g.
// "workspace-write (writes: /src/app, /tmp; .git and other protected paths read-only), network off".
func (p Policy) Summary() string {
	net := p.networkSummary()
	switch p.mode() {
	case DangerFullAccess:
		return "danger-full-access (no sandbox: writes anywhere, network on)"
	case External:
		return "external (an outer sandbox applies; Warden adds none)"
	case ReadOnly:
		return "read-only (writes nowhere; " + p.ReadSummary() + "), " + net
	}
	var shown []string
	if roots, err := p.Roots(); err == nil {
		for _, r := range roots {
			shown = append(shown, r.Path)
		}
	} else {
		shown = slices.Concat(p.Workspace, p.WritableRoots)
	}
	if len(shown) == 0 {
		shown = []string{"nothing"}
	}
	return fmt.Sprintf("workspace-write (writes: %s; .git and other protected paths read-only; %s), %s", strings.Join(shown, ", "), p.ReadSummary(), net)
}

// cacheSet is the directory of the policy's cache set, or "" when commands
// get none: no cache root, no workspace, or not workspace-write (read-only
// writes nowhere; unsandboxed runs keep the user's caches).
func (p Policy) cacheSet() string { return p.cacheSetWith(nil) }

func (p Policy) cacheSetWith(m *pathmemo.Memo) string {
	if p.Caches.Root == "" || len(p.Workspace) == 0 || p.mode() != WorkspaceWrite || !filepath.IsAbs(p.Caches.Root) {
		return ""
	}
	ws := p.Workspace[0]
	if r, err := m.EvalSymlinks(ws); err == nil {
		ws = r
	}
	return toolcache.SetDir(p.Caches.Root, ws)
}
