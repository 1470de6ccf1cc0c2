package gitfacts

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
)

// repoProtected judges a repository whose git dir is itself protected: the
// config files it reads (the repository's own, config.worktree, and what
// they include) and every submodule git would recurse into. A submodule
// registered but not checked out is an empty directory in the work tree,
// where a sandboxed command may have made a repository of its own; git
// status, diff and submodule on the host would run its fsmonitor and hooks.
// A submodule is protected when its .git is missing or names a protected
// git dir (.git/modules of the top repository), and so on down.
func (j Judge) repoProtected(gitDir, workTree string, treeGiven bool, depth int) bool {
	if depth > 8 {
		return false
	}
	common := gitDir
	if c := commonDir(gitDir); len(c) > 0 {
		common = c[0]
	}
	entries, ok := j.ConfigProtected(filepath.Join(common, "config"), workTree, 0)
	if !ok {
		return false
	}
	more, ok := j.ConfigProtected(filepath.Join(gitDir, "config.worktree"), workTree, 0)
	if !ok {
		return false
	}
	entries = append(entries, more...)
	if w, set := configValueOf(entries, "core", "worktree"); set && !treeGiven {
		workTree = absFrom(gitDir, w)
	}
	if b, _ := configValueOf(entries, "core", "bare"); strings.EqualFold(b, "true") && !treeGiven {
		workTree = ""
	}
	if workTree == "" {
		return true // no work tree: nothing checked out to recurse into
	}
	hashLen := 20
	if f, _ := configValueOf(entries, "extensions", "objectformat"); strings.EqualFold(f, "sha256") {
		hashLen = 32
	}
	paths, err := indexGitlinks(filepath.Join(gitDir, "index"), hashLen)
	if err != nil {
		return false
	}
	// .gitmodules (the sandbox's to edit: it can only add paths here) and
	// the submodules initialised in the config, named as their usual path.
	modules, err := gitconfig.Read(filepath.Join(workTree, ".gitmodules"))
	if err != nil {
		return false
	}
	for _, e := range modules {
		if e.Section == "submodule" && e.Key == "path" {
			paths = append(paths, e.Value)
		}
	}
	for _, e := range entries {
		if e.Section == "submodule" && e.Sub != "" {
			paths = append(paths, e.Sub)
		}
	}
	for _, p := range paths {
		dir := filepath.Join(workTree, p)
		if filepath.IsAbs(p) || !pathWithin(workTree, dir) || dir == workTree {
			continue // git refuses such a submodule path
		}
		if !j.submoduleProtected(dir, depth) {
			return false
		}
	}
	return true
}

// submoduleProtected judges the repository at a submodule's path, if any.
func (j Judge) submoduleProtected(dir string, depth int) bool {
	dotgit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotgit)
	if os.IsNotExist(err) {
		return true // not checked out, nothing to enter
	}
	if err != nil {
		return false
	}
	sub := dotgit
	if !st.IsDir() {
		t, ok := readGitfile(dotgit)
		if !ok {
			return false
		}
		sub = t
	}
	if !gitDirProtected(sub, j.Roots) {
		return false
	}
	return j.repoProtected(sub, dir, false, depth+1)
}
