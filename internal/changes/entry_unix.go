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
