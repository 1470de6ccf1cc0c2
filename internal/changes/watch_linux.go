package changes

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask: every way an entry of a directory changes, content included.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// watcher learns, from inotify, which entries of a root changed: a look
// after a run then costs what the run changed, not what the tree holds.
// Events are queued by the kernel when the change is made, so once a run
// has ended, reading the queue dry (drain) sees all it did. Lost events
// (the queue overflowed), a directory that cannot be watched (the
// watches' limit): broken, and the root is walked again.
type watcher struct {
	root string
	fd   int

	mu     sync.Mutex
	dirs   map[int32]string // watch → directory, relative to the root
	broken string
	buf    []byte
}

func newWatcher(root string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return &watcher{root: root, fd: fd, dirs: map[int32]string{}, buf: make([]byte, 256<<10)}, nil
}

// mark watches the directory rel; walkFrom calls it before listing rel.
func (w *watcher) mark(rel string) {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(w.root, filepath.FromSlash(rel)), watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		w.dirs[int32(wd)] = rel
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		// gone since it was listed: its parent's watch said so
	case w.broken == "":
		w.broken = "cannot watch " + rel + ": " + err.Error()
	}
}

// changed is what the queued events say: entries to look at again, and
// directories to walk again (made, or moved in, since they were listed).
type changed struct {
	paths map[string]bool
	dirs  map[string]bool
}

// drain reads every queued event. ok is false when the watcher can no
// longer tell what changed (lost events, a directory it could not watch).
func (w *watcher) drain() (c changed, ok bool) {
	c = changed{paths: map[string]bool{}, dirs: map[string]bool{}}
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		w.apply(w.buf[:n], c)
	}
	return c, w.broken == ""
}

func (w *watcher) apply(buf []byte, c changed) {
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			return
		}
		name := strings.TrimRight(string(buf[unix.SizeofInotifyEvent:end]), "\x00")
		buf = buf[end:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			w.broken = "events were lost"
			continue
		}
		dir, known := w.dirs[ev.Wd]
		if !known {
			continue
		}
		if ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(w.dirs, ev.Wd)
			}
			continue // the parent's watch reports the entry
		}
		rel := path.Join(dir, name)
		c.paths[rel] = true
		if ev.Mask&unix.IN_ISDIR == 0 {
			continue
		}
		switch {
		case ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			c.dirs[rel] = true
		case ev.Mask&unix.IN_MOVED_FROM != 0:
			// Its watches now name the wrong place: forget them; if it
			// moved within the root, the move in walks it again.
			for wd, d := range w.dirs {
				if d == rel || strings.HasPrefix(d, rel+"/") {
					delete(w.dirs, wd)
				}
			}
		}
	}
}

func (w *watcher) close() { unix.Close(w.fd) }
