//go:build unix

package risk

import (
	"os"

	"golang.org/x/sys/unix"
)

// lstatAt stats name in the open directory dir (at path) without following
// a symlink: fstatat, no path walk per entry.
func lstatAt(dir *os.File, _, name string) (isDir bool, size int64, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, 0, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, st.Size, nil
}
