//go:build windows

package risk

import (
	"os"
	"path/filepath"
)

// lstatAt stats name in the directory at path without following a symlink.
func lstatAt(_ *os.File, path, name string) (isDir bool, size int64, err error) {
	info, err := os.Lstat(filepath.Join(path, name))
	if err != nil {
		return false, 0, err
	}
	return info.IsDir(), info.Size(), nil
}
