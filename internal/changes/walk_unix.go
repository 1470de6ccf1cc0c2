//go:build linux || darwin

package changes

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readDir lists dir's entries: the subdirectories by name, and each other
// entry's Entry, stat'ed relative to the open directory (a lookup of one
// name, not of the whole path).
func readDir(dir string) (subdirs []string, files map[string]Entry, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	fd := int(f.Fd())
	files = make(map[string]Entry, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			subdirs = append(subdirs, e.Name())
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // gone since the listing
		}
		files[e.Name()] = entryOfStat(&st)
	}
	return subdirs, files, nil
}

func entryOfStat(st *unix.Stat_t) Entry {
	mtime := time.Unix(st.Mtim.Unix()).UnixNano()
	return Entry{Size: st.Size, Mtime: mtime, Ctime: time.Unix(st.Ctim.Unix()).UnixNano(), Ino: uint64(st.Ino), Mode: modeOf(uint32(st.Mode))}
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
