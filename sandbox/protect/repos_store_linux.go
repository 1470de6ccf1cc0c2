package protect

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Filesystems known to set a directory's ctime on every change of its
// entries. Others (network and FUSE filesystems, overlayfs, whose merged
// directory changes with its lower layers) are always listed.
var ctimeFilesystems = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:  true, // ext2, ext3 and ext4
	unix.XFS_SUPER_MAGIC:   true,
	unix.BTRFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC:       true,
}

var devKeepsCtime sync.Map // device → bool

// dirStampOf stats dir; kept says whether its filesystem keeps ctime, so the
// key may stand for its entries.
func dirStampOf(dir string) (dirStamp, bool) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dirStamp{}, false
	}
	k := dirStamp{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano()}
	ok, seen := devKeepsCtime.Load(st.Dev)
	if !seen {
		var fs unix.Statfs_t
		ok = unix.Statfs(dir, &fs) == nil && ctimeFilesystems[int64(fs.Type)]
		devKeepsCtime.Store(st.Dev, ok)
	}
	return k, ok.(bool)
}
