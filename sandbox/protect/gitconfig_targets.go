package protect

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A repository's config (or the user's) can make git obey or run files
// outside the git dir: a hooks directory in the work tree (core.hooksPath:
// husky's .husky/_, a project's .githooks), a config file it includes (a
// project's shared ../.gitconfig, which may set core.fsmonitor). In a
// writable root those are the sandbox's to rewrite, and the next git the
// user runs on the host (a commit, the shell prompt's status) would run
// what the command wrote. They are held read-only like the git dir's own
// hooks and config, and one that is missing is moved away when the command
// makes it.

// gitHookNames are the hooks git runs (githooks(5)): what is protected in a
// hooks directory that is a writable root itself, which cannot be held
// read-only as a whole.
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
}

// protectConfigTargets adds to the roots what the configs of their git
// dirs make git obey or run (gitconfig.Targets): in a git dir, a read-only
// entry of its split; elsewhere in a writable root, a protected path
// (newGuard lists the missing ones and refuses a symbolic link). A hooks
// directory that is a writable root itself keeps only its hooks.
func protectConfigTargets(roots []Root, find *gitconfig.Finder) {
	// The user's own config names some without any repository: a
	// dotfiles directory opened as the workspace holds what it includes.
	targets := find.Targets("")
	for _, r := range roots {
		for _, gp := range r.Git {
			if gp.Writable && gp.VCS == "" {
				targets = append(targets, find.Targets(gp.Path)...)
			}
		}
		// A work tree whose git dir the root does not hold (a linked
		// worktree of a repository elsewhere, a submodule) still runs the
		// hooks its config names in this work tree.
		for _, f := range append([]string{filepath.Join(r.Path, ".git")}, r.Found...) {
			if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() && filepath.Base(f) == ".git" {
				targets = append(targets, find.Targets(f)...)
			}
		}
	}
	for _, t := range targets {
		for i := range roots {
			r := &roots[i]
			if !pathutil.Within(r.Path, t) {
				continue
			}
			if d := owningGitDir(r.Git, t); d != "" {
				if d != t && !slices.ContainsFunc(r.Git, func(gp GitPath) bool { return gp.Path == t }) {
					_, err := os.Lstat(t)
					r.Git = append(r.Git, GitPath{Path: t, Missing: err != nil})
				}
				continue
			}
			add := []string{t}
			if t == r.Path {
				add = add[:0]
				for _, h := range gitHookNames {
					add = append(add, filepath.Join(t, h))
				}
			}
			for _, p := range add {
				if !slices.Contains(r.Protected, p) {
					r.Protected = append(r.Protected, p)
				}
			}
		}
	}
}

// owningGitDir is the deepest git dir of a split that holds p ("" none).
func owningGitDir(git []GitPath, p string) string {
	owner := ""
	for _, gp := range git {
		if gp.Writable && pathutil.Within(gp.Path, p) && len(gp.Path) > len(owner) {
			owner = gp.Path
		}
	}
	return owner
}
