package seatbelt

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// resolveExisting resolves symlinks in the longest existing prefix
// of p, so a path that does not exist yet is named as it would be created.
func resolveExisting(p string) string { return (*pathmemo.Memo)(nil).ResolveExisting(p) }
