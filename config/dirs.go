package config

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/homeentry"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/shellenv"
)

// ConfigDir is $XDG_CONFIG_HOME/warden (default ~/.config/warden): config.toml
// and the user's rules directory live here.
func ConfigDir() string {
	return xdgDir("XDG_CONFIG_HOME", ".config")
}

// StateDir is $XDG_STATE_HOME/warden (default ~/.local/state/warden): the audit
// log, session transcripts and patch checkpoints live here.
func StateDir() string {
	return xdgDir("XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// RulesDir is the user's exec-policy rules directory.
func RulesDir() string { return filepath.Join(ConfigDir(), "rules") }

// File is the path of config.toml.
func File() string { return filepath.Join(ConfigDir(), "config.toml") }

// CheckDirs reports an error when there is no safe place for Warden's
// configuration and state: no usable home directory and no XDG variables.
// Commands call it before they use ConfigDir or StateDir.
func CheckDirs() error {
	if os.Getenv("XDG_CONFIG_HOME") != "" && os.Getenv("XDG_STATE_HOME") != "" &&
		filepath.IsAbs(os.Getenv("XDG_CONFIG_HOME")) && filepath.IsAbs(os.Getenv("XDG_STATE_HOME")) {
		return nil
	}
	if _, err := home(); err != nil {
		return err
	}
	return nil
}

// ProtectedPaths are the directories a sandboxed command must never change,
// wherever they fall: Warden's configuration (config.toml, rules) and state
// (audit log, sessions, checkpoints), the Codex rules directory it loads,
// the user's own git configuration (core.fsmonitor, hooksPath and
// aliases run code for every git command on the host), the startup
// files the host runs later without asking (hostRuns: shell rc files,
// ~/.ssh, session autostart, PATH directories, editor init files), and the
// user's toolchain caches (userCaches).
//
// A startup path that is one of the session's workspaces, or holds one, is
// left out: a user who opens ~/.config/nvim or ~/bin as the workspace asked
// the agent to work there. Warden's own directories and the git
// configuration are never left out (a workspace inside them is refused).
func ProtectedPaths(cfg Config, workspaces ...string) []string {
	return ProtectedPathsMemo(pathmemo.New(), cfg, workspaces...)
}

// ProtectedPathsMemo is ProtectedPaths resolving through m, the memo of the
// run it is for (see sandbox.Policy.WithSetupMemo).
func ProtectedPathsMemo(m *pathmemo.Memo, cfg Config, workspaces ...string) []string {
	out := []string{ConfigDir(), StateDir()}
	res := resolver{m}
	if filepath.IsAbs(cfg.CodexRulesDir) {
		out = append(out, filepath.Clean(cfg.CodexRulesDir))
	}
	if h, err := home(); err == nil {
		out = append(out, filepath.Join(h, ".gitconfig"))
		if x := os.Getenv("XDG_CONFIG_HOME"); !filepath.IsAbs(x) {
			out = append(out, filepath.Join(h, ".config", "git"))
		}
		for _, p := range startupPaths(h) {
			if !res.holdsAny(p, workspaces) {
				out = append(out, p)
			}
		}
		// A cache the user made a writable root, or allowed with
		// home_writable, is theirs to share.
		roots := append(ExpandHome(cfg.WritableRoots), workspaces...)
		for _, e := range cfg.HomeWritable {
			if c, err := homeentry.Clean(e); err == nil {
				roots = append(roots, filepath.Join(h, c))
			}
		}
		for _, p := range userCaches(h, roots) {
			if !res.holdsAny(p, roots) {
				out = append(out, p)
			}
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "git"))
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); filepath.IsAbs(g) {
		out = append(out, filepath.Clean(g))
	}
	out = append(out, res.gitConfigTargets(workspaces)...)
	for _, ws := range workspaces {
		// What the workspace's .envrc and mise configs make the user's
		// shell source or load: the sandbox finds them again at each run,
		// here they make a patch to them ask.
		out = append(out, shellenv.Targets(ws, os.Getenv)...)
	}
	return out
}

// gitConfigTargets are what the config of each workspace's repository (or
// the user's) makes git run or obey inside that workspace: its
// core.hooksPath, the files it includes (gitconfig.Targets). The sandbox
// finds them again at each run; here they make a patch to them ask.
func (r resolver) gitConfigTargets(workspaces []string) []string {
	var out []string
	h, _ := home()
	find := gitconfig.NewFinder(gitconfig.GlobalFiles(os.Getenv), h)
	for _, ws := range workspaces {
		for _, t := range find.Targets(filepath.Join(ws, ".git")) {
			if t != ws && r.holdsAny(ws, []string{t}) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func xdgDir(env, fallback string) string {
	if base := os.Getenv(env); filepath.IsAbs(base) {
		return filepath.Join(base, "warden")
	}
	h, err := home()
	if err != nil {
		// No safe place: a path that cannot be created, never a shared or
		// writable default. CheckDirs says why before anything uses it.
		return filepath.Join(string(filepath.Separator), "nonexistent", "warden-no-home", fallback, "warden")
	}
	return filepath.Join(h, fallback, "warden")
}

// home is $HOME, or with HOME unset the home directory of the user's
// password entry. Never a temporary directory: $TMPDIR and /tmp are
// writable roots of the sandbox, and Warden's rules there would be the
// sandboxed command's to rewrite.
func home() (string, error) {
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Clean(h), nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("HOME is not set and the user's home directory is unknown (%v): set HOME, or XDG_CONFIG_HOME and XDG_STATE_HOME, to where Warden may keep its configuration and state", err)
	}
	if !filepath.IsAbs(u.HomeDir) || filepath.Clean(u.HomeDir) == "/" || isTempDir(u.HomeDir) {
		return "", fmt.Errorf("HOME is not set and the password entry's home %q is not a safe place for Warden's configuration: set HOME, or XDG_CONFIG_HOME and XDG_STATE_HOME", u.HomeDir)
	}
	if st, err := os.Stat(u.HomeDir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("HOME is not set and the password entry's home %s does not exist: set HOME, or XDG_CONFIG_HOME and XDG_STATE_HOME", u.HomeDir)
	}
	return filepath.Clean(u.HomeDir), nil
}

func isTempDir(dir string) bool {
	dir = filepath.Clean(dir)
	for _, t := range []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} {
		t = filepath.Clean(t)
		if dir == t || strings.HasPrefix(dir, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// holdsAny reports whether dir is one of paths or an ancestor of one, by
// whole path components, links resolved where they exist.
func holdsAny(dir string, paths []string) bool {
	return resolver{pathmemo.New()}.holdsAny(dir, paths)
}

// resolver resolves paths for one call that compares many paths against
// the same few (ProtectedPaths: some 60 startup paths and caches against
// each workspace, all in the same home directory), each directory of them
// looked up once.
type resolver struct{ memo *pathmemo.Memo }

func (r resolver) holdsAny(dir string, paths []string) bool {
	d := r.resolved(dir)
	for _, p := range paths {
		rel, err := filepath.Rel(d, r.resolved(p))
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func (r resolver) resolved(p string) string {
	if rp, err := r.memo.EvalSymlinks(p); err == nil {
		return rp
	}
	return filepath.Clean(p)
}
