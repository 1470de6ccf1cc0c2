package changes

import (
	"io/fs"
)

// Entry is one file's stat, enough to tell that it did not change.
type Entry struct {
	Size  int64
	Mtime int64 // nanoseconds
	Ctime int64 // nanoseconds; 0 where the system has none
	Ino   uint64
	Mode  fs.FileMode
}

// entryOf is fi's Entry.
func entryOf(fi fs.FileInfo) Entry {
	e := Entry{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: fi.Mode()}
	e.Ctime, e.Ino = sysStat(fi)
	return e
}

// regular reports a plain file (not a link, device or directory).
func (e Entry) regular() bool { return e.Mode.IsRegular() }

// symlink reports a symbolic link: its target is its content.
func (e Entry) symlink() bool { return e.Mode&fs.ModeSymlink != 0 }

// dir reports an empty directory: a tree holds only those, as entries of
// their own (a directory with entries is known by them).
func (e Entry) dir() bool { return e.Mode.IsDir() }

// dirEntry is an empty directory's Entry: its mode alone, as its times
// change with every name made and removed in it.
func dirEntry(mode fs.FileMode) Entry { return Entry{Mode: mode} }
