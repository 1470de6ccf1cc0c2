package linux

import (
	"github.com/wardenhq/warden/internal/gitconfig"
)

// gitdirTarget reads a .git file of the form "gitdir: PATH"
// (gitconfig.GitdirTarget).
func gitdirTarget(gitfile string) (string, bool) { return gitconfig.GitdirTarget(gitfile, nil) }
