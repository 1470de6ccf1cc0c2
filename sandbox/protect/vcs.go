package protect

import (
	"path/filepath"
	"strings"
)

// A VCS is a version control system as the sandbox meets its metadata in
// a work tree: the tool finds it from any directory below, and what it
// executes or obeys there (config with hooks, extensions, aliases, pagers;
// a file that points it at another repository) runs on the host the next
// time the user runs the tool or a prompt that calls it. Those entries are
// held read-only, and a missing one the command creates is moved away;
// the rest is the repository's data, which the tool writes and the
// sandbox lets a command write, so the tool works sandboxed.
type VCS struct {
	Name string
	// Entry is the metadata's name at the top of a work tree.
	Entry string
	// Obeyed are the entries of Entry the tool executes or obeys,
	// relative to it.
	Obeyed []string
	// GitDirs are git dirs inside Entry that the tool runs git on (split
	// as any git dir is).
	GitDirs []string
	// Whole says the entry is a file holding data and settings at once,
	// held read-only as a whole: the tool cannot write there sandboxed.
	Whole bool
}

// VCSes are the version control systems whose metadata is protected.
// Git's own split (config includes, the git dirs of submodules and linked
// worktrees) is the sandbox's gitLayout; its row names the entry.
var VCSes = []VCS{
	{Name: "Git", Entry: ".git"},
	// hgrc holds [hooks], [extensions] (Python loaded from any path) and
	// shell aliases; sharedpath and requires (share-safe) make hg read
	// another repository's hgrc.
	{Name: "Mercurial", Entry: ".hg", Obeyed: []string{"hgrc", "hgrc-not-shared", "sharedpath", "requires"}},
	// Sapling reads config (and hgrc, as Mercurial did).
	{Name: "Sapling", Entry: ".sl", Obeyed: []string{"config", "hgrc", "sharedpath", "requires"}},
	// The repository's and the workspace's config (jj before 0.37 reads
	// them there; later ones read the file their config-id names in the
	// user's config directory), the file that makes a secondary
	// workspace use another repository, the store's backend and the git
	// dir it names, and that git dir itself (jj runs git on it).
	{Name: "Jujutsu", Entry: ".jj", Obeyed: []string{
		"workspace-config.toml", "workspace-config-id",
		filepath.Join("repo", "config.toml"), filepath.Join("repo", "config-id"),
		filepath.Join("repo", "store", "type"), filepath.Join("repo", "store", "git_target"),
	}, GitDirs: []string{filepath.Join("repo", "store", "git")}},
	// branch.conf names post_commit hooks and, with location, another
	// branch; control.conf is Breezy's. Plugins load from the user's
	// directories only.
	{Name: "Bazaar", Entry: ".bzr", Obeyed: []string{
		filepath.Join("branch", "branch.conf"), filepath.Join("branch", "location"), "control.conf",
	}},
	// prefs/defaults gives any command --posthook/--prehook; prefs/prefs
	// names the test and predist commands. The rest of prefs (author,
	// defaultrepo, repos) is written by ordinary commands.
	{Name: "darcs", Entry: "_darcs", Obeyed: []string{filepath.Join("prefs", "defaults"), filepath.Join("prefs", "prefs")}},
	// config holds [hooks] run on record.
	{Name: "Pijul", Entry: ".pijul", Obeyed: []string{"config"}},
	// A checkout database names the repository file fossil opens, whose
	// settings hold hooks and commands: one SQLite file, so held whole.
	{Name: "Fossil", Entry: ".fslckout", Whole: true},
	{Name: "Fossil", Entry: "_FOSSIL_", Whole: true},
	// .svn holds no settings (they are in ~/.subversion) and no hooks
	// (the server's): all data, nothing to hold.
	{Name: "Subversion", Entry: ".svn"},
}

// VCSEntries are the metadata entries that hold something the tool
// obeys: Names protects them (the sandbox splits the directories).
func VCSEntries() []string {
	var out []string
	for _, v := range VCSes {
		if v.Entry == ".git" || len(v.Obeyed) > 0 || len(v.GitDirs) > 0 || v.Whole {
			out = append(out, v.Entry)
		}
	}
	return out
}

// VCSOf returns the row whose Entry is name, in any letter case.
func VCSOf(name string) (VCS, bool) {
	for _, v := range VCSes {
		if strings.EqualFold(v.Entry, name) {
			return v, true
		}
	}
	return VCS{}, false
}
