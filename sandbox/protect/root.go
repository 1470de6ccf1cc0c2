package protect

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/shellenv"
)

// Root is one writable directory and the paths inside it that stay read-only.
type Root struct {
	Path string // absolute, symlinks resolved
	// Shared says nobody works in it: $TMPDIR, /tmp or Warden's caches,
	// not a workspace or a configured root. Its top keeps only
	// SharedNames, and no shell-entry config is looked for there.
	Shared bool `json:"-"`
	// Protected are read-only while they exist; a missing one the command
	// creates is moved away and reported. Absolute paths, under Path but for
	// a gitdir: target elsewhere.
	Protected []string
	// Missing are the Protected paths that did not exist when the launcher
	// set up the run: nothing is mounted there, and one the command creates
	// is moved away (see quarantine). The Linux helper gets neither list's
	// missing paths (helperRoots).
	Missing []string `json:",omitempty"`
	// Found are existing repositories deeper in the tree (.git directories
	// and files, their gitdir: targets, $GIT_DIR), found by scanRepos when
	// the command starts: read-only while they exist.
	Found []string `json:",omitempty"`
	// Git splits the git dirs among Protected and Found (the top .git,
	// repositories found below) into writable data and read-only parts
	// (gitLayout), in the order the sandbox applies them.
	Git []GitPath `json:",omitempty"`
	// Home is set when the root is or holds the home directory: its
	// dot-entries are among Protected, and one the command creates is
	// moved away (HomeHeld). The launcher's alone.
	Home *HomeTop `json:"-"`
	// Watched are existing entries a mount cannot hold (links among the
	// home's dot-entries or on PATH): one the command replaces is moved
	// away. The launcher's alone.
	Watched []string `json:"-"`
}

// AtTop lists root's protected entries (for a shared temporary
// directory nobody works in, SharedNames), plus the target of a
// `gitdir:` file when .git is one (a worktree or submodule keeps its hooks
// and config there).
func AtTop(root string, shared bool, m *pathmemo.Memo) []string {
	names := slices.Concat(Names(), Subpaths, shellenv.MiseEnvNames(os.Getenv))
	if shared {
		names = SharedNames()
	}
	out := make([]string, 0, len(names)+1)
	for _, n := range names {
		out = append(out, filepath.Join(root, n))
	}
	if !shared {
		// The files protected by their name's end (a VS Code workspace
		// file): those that exist. One the command makes is not opened by
		// anyone unasked; a link is left alone (the guard refuses to run
		// with a protected link, and this one the user made).
		entries, _ := ReadDirNames(root)
		for _, e := range entries {
			if e.Regular && HasSuffix(e.Name) {
				out = append(out, filepath.Join(root, e.Name))
			}
		}
	}
	if target, ok := gitconfig.GitdirTarget(filepath.Join(root, ".git"), m); ok {
		out = append(out, target)
	}
	return out
}
