package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
)

// linuxWithin reports whether p is dir or below it (both clean and absolute).
func linuxWithin(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// linuxGitdirTarget reads a .git file of the form "gitdir: PATH"
// (gitconfig.GitdirTarget).
func linuxGitdirTarget(gitfile string) (string, bool) { return gitconfig.GitdirTarget(gitfile, nil) }
