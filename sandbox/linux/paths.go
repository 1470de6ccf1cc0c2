package linux

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
)

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// gitdirTarget reads a .git file of the form "gitdir: PATH"
// (gitconfig.GitdirTarget).
func gitdirTarget(gitfile string) (string, bool) { return gitconfig.GitdirTarget(gitfile, nil) }
