//go:build linux || darwin

package changes

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// readDir lists dir's entries: the subdirectories by name and mode, and
// each other entry's Entry, stat'ed relative to the open directory (a lookup of one
// name, not of the whole path). It calls the system directly: an os.File
// costs a few more system calls per directory, and a tree has thousands.
func readDir(dir string, file func(name string, e Entry)) (subdirs []subdir, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 32<<10)
	var names []string
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names[:0])
		for _, name := range names {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // gone since the listing
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				subdirs = append(subdirs, subdir{name, modeOf(uint32(st.Mode))})
				continue
			}
			file(name, entryOfStat(&st))
		}
	}
	return subdirs, nil
}

func entryOfStat(st *unix.Stat_t) Entry {
	return Entry{Size: st.Size, Mtime: time.Unix(st.Mtim.Unix()).UnixNano(), Ctime: time.Unix(st.Ctim.Unix()).UnixNano(), Ino: uint64(st.Ino), Mode: modeOf(uint32(st.Mode))}
}

// modeOf is the fs.FileMode of a stat's st_mode, as os.Lstat gives it.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
