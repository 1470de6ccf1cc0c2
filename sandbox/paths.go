package sandbox

import (
	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
)

// underAny reports whether p is one of dirs or below one.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if pathutil.Within(d, p) {
			return true
		}
	}
	return false
}

// resolveExisting resolves symlinks in the longest existing prefix of p, so
// a path that does not exist yet is named as it would be created.
func resolveExisting(p string) string { return (*pathmemo.Memo)(nil).ResolveExisting(p) }

// gitdirTarget reads a .git file of the form "gitdir: PATH"
// (gitconfig.GitdirTarget).
func gitdirTarget(gitfile string) (string, bool) { return gitconfig.GitdirTarget(gitfile, nil) }
