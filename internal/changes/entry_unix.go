//go:build linux || darwin

package changes

import (
	"io/fs"
	"syscall"
)

func sysStat(fi fs.FileInfo) (ctime int64, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return ctimeOf(st), uint64(st.Ino)
}

// nlinkOf is how many names the file has (1 when unknown).
func nlinkOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// inodeOf is the inode of the file at p.
func inodeOf(p string) (uint64, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return 0, false
	}
	return uint64(st.Ino), true
}
