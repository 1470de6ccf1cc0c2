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
