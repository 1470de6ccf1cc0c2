package seatbelt

import (
	"github.com/wardenhq/warden/internal/pathmemo"
)

// resolveExisting resolves symlinks in the longest existing prefix
// of p, so a path that does not exist yet is named as it would be created.
func resolveExisting(p string) string { return (*pathmemo.Memo)(nil).ResolveExisting(p) }
