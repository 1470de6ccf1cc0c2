//go:build !linux

package agent

import (
	"os"
	"path/filepath"
)

// realPath is where path leads, links resolved ("" when it cannot be said:
// the check then resolves by name).
func realPath(_ *os.File, path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return ""
}
