package guard

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/wardenhq/warden/internal/fanotify"
	"golang.org/x/sys/unix"
)

// fanWatcher is an unprivileged fanotify group reporting directory entry
// events with the directory's file handle and the entry's name
// (FAN_REPORT_DFID_NAME). Its marks are inode marks on the watched
// directories, held through an open descriptor of each.
type fanWatcher struct {
	file *os.File

	mu    sync.Mutex
	marks map[watchKey]*fanMark
	dirs  map[string]string // directory identity (fanID) → its path
}

type fanMark struct {
	fd int    // the marked directory, open
	id string // its identity as events name it
}

func newFanWatcher() (*fanWatcher, error) {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fanotify: %w", err)
	}
	return &fanWatcher{file: os.NewFile(uintptr(fd), "fanotify"), marks: map[watchKey]*fanMark{}, dirs: map[string]string{}}, nil
}

// fanMask is what k asks to be told: creations and renames into the
// directory, of files and directories; or its entries' attribute changes.
func fanMask(k watchKey) uint64 {
	if k.attrib {
		return unix.FAN_ATTRIB | unix.FAN_EVENT_ON_CHILD | unix.FAN_ONDIR
	}
	return unix.FAN_CREATE | unix.FAN_MOVED_TO | unix.FAN_ONDIR
}

// add marks k's directory, resolved now: a directory replaced since an
// earlier mark is marked afresh and the old one let go.
func (f *fanWatcher) add(k watchKey) error {
	fd, err := unix.Open(k.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", k.dir, err)
	}
	id, err := fanotify.DirID(fd)
	if err != nil {
		unix.Close(fd)
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.marks[k]; old != nil {
		if old.id == id {
			unix.Close(fd)
			return nil
		}
		f.removeLocked(k)
	}
	if err := unix.FanotifyMark(int(f.file.Fd()), unix.FAN_MARK_ADD, fanMask(k), fd, ""); err != nil {
		unix.Close(fd)
		return fmt.Errorf("fanotify mark %s: %w", k.dir, err)
	}
	f.marks[k] = &fanMark{fd: fd, id: id}
	f.dirs[id] = k.dir
	return nil
}

func (f *fanWatcher) remove(k watchKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(k)
}

// removeLocked removes k's share of the mark: the bits the other key on
// the same directory does not need (FAN_ONDIR is in both). Called with f.mu.
func (f *fanWatcher) removeLocked(k watchKey) {
	m := f.marks[k]
	if m == nil {
		return
	}
	delete(f.marks, k)
	bits := fanMask(k)
	other := watchKey{dir: k.dir, attrib: !k.attrib}
	if o := f.marks[other]; o != nil && o.id == m.id {
		bits &^= fanMask(other)
	} else {
		delete(f.dirs, m.id)
	}
	unix.FanotifyMark(int(f.file.Fd()), unix.FAN_MARK_REMOVE, bits, m.fd, "") // gone already is fine
	unix.Close(m.fd)
}

// fanLoop hands each event to the guards, as the path it names when the
// directory is one of the marked ones, else "/" (all names are looked at).
func fanLoop(f *fanWatcher) {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.file.Read(buf)
		if err != nil {
			hubEvent("/") // events may be lost: look at every name
			return
		}
		for _, name := range f.decode(buf[:n]) {
			hubEvent(name)
		}
	}
}

// decode reads the events in buf (struct fanotify_event_metadata, each
// followed by its info records).
func (f *fanWatcher) decode(buf []byte) []string {
	var names []string
	for len(buf) >= unix.FAN_EVENT_METADATA_LEN {
		evLen := int(binary.NativeEndian.Uint32(buf[0:]))
		metaLen := int(binary.NativeEndian.Uint16(buf[6:]))
		if evLen < unix.FAN_EVENT_METADATA_LEN || evLen > len(buf) || metaLen > evLen {
			return append(names, "/")
		}
		mask := binary.NativeEndian.Uint64(buf[8:])
		if mask&unix.FAN_Q_OVERFLOW != 0 {
			names = append(names, "/")
		} else {
			names = append(names, f.eventPath(buf[metaLen:evLen]))
		}
		buf = buf[evLen:]
	}
	return names
}

// eventPath is the path an event's DFID_NAME record names, or "/".
func (f *fanWatcher) eventPath(info []byte) string {
	id, name, ok := fanotify.DFIDName(info)
	if !ok || name == "" {
		return "/"
	}
	f.mu.Lock()
	dir, known := f.dirs[id]
	f.mu.Unlock()
	if !known {
		return "/"
	}
	return filepath.Join(dir, name)
}
