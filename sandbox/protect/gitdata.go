package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A repository's git dir holds two kinds of files. Its data (objects, refs,
// logs, the index, HEAD and the other state files, their locks) is what
// add, commit, branch, checkout, stash, merge and rebase write: the sandbox
// lets a command write it. What git executes or obeys (config, hooks, the
// files that point git at another git dir, the directories that hold the
// submodules' and linked worktrees' git dirs) stays read-only; a missing hooks/, config,
// config.worktree, commondir, modules/ or worktrees/ (or a file the config
// includes, at the top) gets a read-only placeholder for the run, so it
// cannot be created at all
// (gitmask_linux.go; on macOS the profile denies the paths). Otherwise the
// next git the user runs on the host would run the command's code. So a
// sandboxed `git worktree add` or `git submodule update --init` (which
// make a new git dir there) fails with "Read-only file system".
//
// git also obeys the state of an interrupted rebase or cherry-pick
// (rebase-merge/git-rebase-todo and sequencer/todo hold `exec` lines). They
// stay writable so that a sandboxed rebase works; the exec steps a run
// added are taken out when it ends (gittodo.go), and the host refuses to
// take git out of the sandbox while such state exists (approvals).

// GitObeyed are the entries of a git dir held read-only when they exist
// (approvals trusts them on the host for that reason).
// info/ (attributes, exclude, sparse-checkout) runs nothing the work tree's
// .gitattributes and .gitignore could not say, and an alternate names
// objects, which the command may write anyway: a missing one may be created.
var GitObeyed = []string{
	"config", "config.worktree", "commondir", "gitdir", "hooks", "info",
	"objects/info/alternates", "objects/info/http-alternates", "branches", "remotes",
}

// gitGuarded are the entries of GitObeyed that must not be created while
// missing: a new config, config.worktree or hooks runs code, a new commondir
// points git at another git dir (one that cannot get a placeholder is
// moved away when made: quarantine).
var gitGuarded = map[string]bool{"config": true, "config.worktree": true, "commondir": true, "hooks": true}

// GitNested hold the git dirs of submodules and linked worktrees: read-only
// (a missing one gets an empty read-only placeholder) so that no new git
// dir appears there, with each existing git dir inside writable again and
// split the same way.
var GitNested = []string{"modules", "worktrees"}

const gitMaxDepth = 4

// GitPath is one entry of a git dir's split: Writable says whether it is
// data (the git dir itself, a nested git dir) or held read-only. Missing
// says it did not exist when the run was set up: nothing is mounted there,
// and one the command creates is moved away (quarantine).
type GitPath struct {
	Path     string
	Writable bool `json:",omitempty"`
	Missing  bool `json:",omitempty"`
	// Masked says the launcher put an empty placeholder there for the run
	// (gitmask_linux.go): held read-only like an existing entry, and
	// watched like a missing one in case it goes away.
	Masked bool `json:",omitempty"`
	// VCS names the version control system when the split is not a git
	// dir's (vcsdata.go): what reads git's config and step lists skips it.
	VCS string `json:",omitempty"`
}

// gitLayout splits the git dir dir: first dir itself (writable), then its
// read-only entries, then each nested git dir the same way, in an order in
// which applying each entry's access in turn gives the split.
func gitLayout(dir string, find *gitconfig.Finder) []GitPath {
	var out []GitPath
	addGitLayout(&out, dir, 0, find)
	return out
}

func addGitLayout(out *[]GitPath, dir string, depth int, find *gitconfig.Finder) {
	*out = append(*out, GitPath{Path: dir, Writable: true})
	for _, n := range GitObeyed {
		p := filepath.Join(dir, n)
		switch _, err := os.Lstat(p); {
		case err == nil:
			*out = append(*out, GitPath{Path: p})
		case gitGuarded[n]:
			*out = append(*out, GitPath{Path: p, Missing: true})
		}
	}
	for _, p := range GitIncludes(dir, find) {
		// An included file not made yet must not be made by the command.
		_, err := os.Lstat(p)
		*out = append(*out, GitPath{Path: p, Missing: err != nil})
	}
	for _, n := range GitNested {
		p := filepath.Join(dir, n)
		if _, err := os.Lstat(p); err != nil {
			*out = append(*out, GitPath{Path: p, Missing: true})
			continue
		}
		*out = append(*out, GitPath{Path: p})
		if depth < gitMaxDepth {
			for _, sub := range nestedGitDirs(p) {
				addGitLayout(out, sub, depth+1, find)
			}
		}
	}
}

// nestedGitDirs lists the git dirs below a modules or worktrees directory:
// a submodule's name may hold slashes, so directories that are not git dirs
// are entered (a few levels deep).
func nestedGitDirs(dir string) []string {
	var out []string
	var walk func(d string, level int)
	walk = func(d string, level int) {
		entries, err := ReadDirNames(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.Dir {
				continue
			}
			p := filepath.Join(d, e.Name)
			if IsGitDir(p) {
				out = append(out, p)
			} else if level < 3 {
				walk(p, level+1)
			}
		}
	}
	walk(dir, 0)
	return out
}

// IsGitDir says whether dir looks like a git dir: HEAD, objects, refs
// (or commondir for a linked worktree's).
func IsGitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	for _, n := range []string{"objects", "commondir"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// GitIncludes are the files the git dir's config includes by a path
// relative to the config, inside the git dir: git obeys them as it obeys
// the config. find reads the config (the run's Finder: once per run).
func GitIncludes(dir string, find *gitconfig.Finder) []string {
	entries := find.Entries(filepath.Join(dir, "config"))
	var out []string
	for _, e := range entries {
		v := e.Value
		if e.Key != "path" || e.Section != "include" && e.Section != "includeif" ||
			v == "" || filepath.IsAbs(v) || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "%(") {
			continue
		}
		if p := filepath.Join(dir, v); pathutil.Within(dir, p) && p != dir {
			out = append(out, p)
		}
	}
	return out
}

// gitDirs lists the git dirs of root whose data the sandbox may write: the
// top .git when it is a directory (or the target of a .git file, inside
// the root), and the repositories found below (directories only: a .git
// file stays read-only). Those inside another one's nested dirs are
// covered by its layout.
func gitDirs(r Root) []string {
	var out []string
	top := filepath.Join(r.Path, ".git")
	if st, err := os.Lstat(top); err == nil && st.IsDir() {
		out = append(out, top)
	} else if t, ok := gitconfig.GitdirTarget(top, nil); ok && pathutil.Within(r.Path, t) && t != r.Path {
		out = append(out, t)
	}
	if IsScratch(r.Path) {
		// Everyone's scratch: a repository found there stays read-only as
		// a whole.
		return out
	}
	for _, f := range r.Found {
		if st, err := os.Lstat(f); err == nil && st.IsDir() && IsGitDir(f) && !slices.Contains(out, f) && !heldAbove(f, r.Protected) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	// Drop those below another (a submodule's git dir under .git/modules).
	kept := out[:0]
	for _, d := range out {
		if len(kept) == 0 || !pathutil.Within(kept[len(kept)-1], d) {
			kept = append(kept, d)
		}
	}
	return kept
}

// heldAbove reports whether a path of held (a home's dot-entry, a protected
// name) lies above p: a repository found inside what the root holds stays
// read-only as a whole, its data too (the split would reopen it).
func heldAbove(p string, held []string) bool {
	for _, h := range held {
		if h != p && pathutil.Within(h, p) {
			return true
		}
	}
	return false
}

// SplitGitDirs fills each root's Git with the layouts of its git dirs and
// drops those git dirs from Protected and Found, which hold the rest
// read-only as a whole.
// Then it protects what the git configs and the shell-entry configs make
// the host run (protectConfigTargets, protectShellEnv).
func SplitGitDirs(roots []Root) {
	// One reader of the config files for the run: the layouts and the
	// targets read the same ones.
	home, _ := os.UserHomeDir()
	find := gitconfig.NewFinder(gitconfig.GlobalFiles(os.Getenv), home)
	for i := range roots {
		r := &roots[i]
		r.Git = nil
		dirs := gitDirs(*r)
		for _, d := range dirs {
			r.Git = append(r.Git, gitLayout(d, find)...)
		}
		for _, d := range vcsDirs(*r) {
			if v, ok := VCSOf(filepath.Base(d)); ok && !pathutil.WithinAny(d, dirs) {
				r.Git = append(r.Git, vcsLayout(d, v, find)...)
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			continue
		}
		inDirs := func(p string) bool {
			for _, d := range dirs {
				if pathutil.Within(d, p) {
					return true
				}
			}
			return false
		}
		r.Protected = slices.DeleteFunc(slices.Clone(r.Protected), inDirs)
		r.Found = slices.DeleteFunc(slices.Clone(r.Found), inDirs)
	}
	protectConfigTargets(roots, find)
	protectShellEnv(roots)
}
