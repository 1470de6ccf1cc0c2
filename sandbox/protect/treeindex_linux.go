package protect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/fanotify"
	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A process that keeps spare helpers (the server, `warden run`) indexes the
// protected entries of each workspace root once and keeps the index current
// with fanotify: every directory of the root is marked for the creation,
// removal and renaming of its entries, and a directory that appears is
// marked and then listed (so an entry made while it is listed is either
// listed or reported). A run then takes the root's protected entries from
// the index instead of scanning, and after it the ones created since its
// start, at any depth: what a run costs grows with what changed, not with
// the tree (a scan of 10,000 directories is 90 ms; a look at the index,
// microseconds). Lost events (the queue overflowed) rebuild the index, and
// an entry already known keeps its age, so what was created meanwhile is
// still told apart. A root the index cannot serve (the marks' limit, a
// filesystem without file handles) is scanned as a one-shot run scans it,
// and said once.

// indexMask: an entry made, renamed in or out, or removed; directories too.
const indexMask = unix.FAN_CREATE | unix.FAN_MOVED_TO | unix.FAN_MOVED_FROM | unix.FAN_DELETE | unix.FAN_ONDIR

var index struct {
	once sync.Once
	err  error

	mu    sync.Mutex
	fd    int
	seq   uint64                // counts the changes the index has seen
	dirs  map[string]indexDir   // marked directory's identity (fanID) → where
	ids   map[string]string     // marked directory's path → its identity
	roots map[string]*indexRoot // by root and the roots skipped in it
	buf   []byte
}

type indexDir struct {
	path string
	root *indexRoot
}

type indexRoot struct {
	path   string
	skip   []string
	found  map[string]uint64 // protected entry below the top → index.seq when seen
	holds  func(parent string, e DirEntry) bool
	broken string // why the index cannot serve it: it is scanned
	stale  bool   // events were lost: rebuilt at the next look
}

// startIndex makes the process's fanotify group and starts reading it.
func startIndex() error {
	index.once.Do(func() {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			index.err = fmt.Errorf("fanotify: %w", err)
			return
		}
		index.fd, index.buf = fd, make([]byte, 256<<10)
		index.dirs, index.ids, index.roots = map[string]indexDir{}, map[string]string{}, map[string]*indexRoot{}
		go indexLoop()
	})
	return index.err
}

// indexLoop applies the events as they come; a run's look applies those
// still queued itself (drain), so it never sees the index behind the tree.
func indexLoop() {
	fds := []unix.PollFd{{Fd: int32(index.fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			index.mu.Lock()
			for _, r := range index.roots {
				r.broken = fmt.Sprintf("reading its events failed: %v", err)
			}
			index.mu.Unlock()
			return
		}
		index.mu.Lock()
		drainIndex()
		index.mu.Unlock()
	}
}

// indexFound returns root's protected entries below its top (with the
// gitdir: targets of the .git files) and the index's sequence number, for
// indexCreated after the run. ok false: the index does not serve root (the
// caller scans).
func indexFound(root string, skip []string) (found []string, seq uint64, ok bool) {
	r, ok := indexedRoot(root, skip)
	if !ok {
		return nil, 0, false
	}
	all := make([]string, 0, len(r.found))
	for p := range r.found {
		all = append(all, p)
	}
	seq = index.seq
	index.mu.Unlock()
	// Held as a scan holds them: directories and files (a link cannot be
	// held; one the run makes is moved away after it).
	for _, p := range all {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			found = append(found, p)
			if filepath.Base(p) == ".git" {
				if t, ok := gitconfig.GitdirTarget(p, nil); ok {
					found = append(found, t)
				}
			}
		case unix.S_IFDIR:
			found = append(found, p)
		}
	}
	return found, seq, true
}

// IndexCreated returns root's protected entries below its top that
// appeared after seq (indexFound's). ok false: the index no longer serves
// root (the caller scans).
func IndexCreated(root string, skip []string, seq uint64) (created []string, ok bool) {
	r, ok := indexedRoot(root, skip)
	if !ok {
		return nil, false
	}
	defer index.mu.Unlock()
	for p, at := range r.found {
		if at > seq {
			created = append(created, p)
		}
	}
	return created, true
}

// indexedRoot returns root's index, up to date, with index.mu held; ok
// false (the lock released): none serves root.
func indexedRoot(root string, skip []string) (*indexRoot, bool) {
	if startIndex() != nil {
		return nil, false
	}
	index.mu.Lock()
	drainIndex()
	key := root + "\x00" + strings.Join(skip, "\x00")
	r := index.roots[key]
	if r == nil {
		r = &indexRoot{path: root, skip: skip, found: map[string]uint64{}, holds: ScanHolds(root)}
		index.roots[key] = r
		r.stale = true
	}
	if r.stale && r.broken == "" {
		r.stale = false
		rebuildIndex(r)
	}
	if r.broken != "" {
		index.mu.Unlock()
		return nil, false
	}
	return r, true
}

// rebuildIndex walks r, marking each directory before listing it. An entry
// already known keeps its sequence number. Called with index.mu.
func rebuildIndex(r *indexRoot) {
	index.seq++
	found, cut := walkTree(r.path, r.path, r.skip, -1, markAndList(r), WalkMade)
	if cut && r.broken == "" {
		r.broken = fmt.Sprintf("it is larger than the scan's bound (%d directories, %d protected entries)", ScanMaxDirs, ScanMaxFound)
	}
	if r.broken != "" {
		ScanNotice(fmt.Sprintf("the index of %s's protected entries cannot serve it (%s): each run scans it before and after instead", r.path, r.broken))
		return
	}
	now := map[string]uint64{}
	for _, p := range found {
		if at, ok := r.found[p]; ok {
			now[p] = at
		} else {
			now[p] = index.seq
		}
	}
	r.found = now
}

// markAndList marks dir for r's index, then lists it. A directory it
// cannot open is the listing's error (the walk holds it); one it cannot
// mark breaks r's index. Called with index.mu.
func markAndList(r *indexRoot) func(dir string) ([]DirEntry, error) {
	return func(dir string) ([]DirEntry, error) {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		id, err := fanotify.DirID(fd)
		if err == nil {
			err = unix.FanotifyMark(index.fd, unix.FAN_MARK_ADD, indexMask, fd, "")
		}
		unix.Close(fd)
		if err != nil {
			if r.broken == "" {
				r.broken = fmt.Sprintf("marking %s failed: %v", dir, err)
			}
			return nil, nil
		}
		if old, ok := index.ids[dir]; ok && old != id {
			delete(index.dirs, old)
		}
		index.dirs[id], index.ids[dir] = indexDir{dir, r}, id
		return ReadDirNames(dir)
	}
}

// drainIndex applies the queued events. Called with index.mu.
func drainIndex() {
	for {
		n, err := unix.Read(index.fd, index.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: none left
		}
		applyEvents(index.buf[:n])
	}
}

// applyEvents reads events (struct fanotify_event_metadata, each followed
// by its info records) and applies each. Called with index.mu.
func applyEvents(buf []byte) {
	for len(buf) >= unix.FAN_EVENT_METADATA_LEN {
		evLen := int(binary.NativeEndian.Uint32(buf[0:]))
		metaLen := int(binary.NativeEndian.Uint16(buf[6:]))
		if evLen < unix.FAN_EVENT_METADATA_LEN || evLen > len(buf) || metaLen > evLen {
			lostEvents("an event could not be read")
			return
		}
		mask := binary.NativeEndian.Uint64(buf[8:])
		if mask&unix.FAN_Q_OVERFLOW != 0 {
			lostEvents("the event queue overflowed")
		} else if id, name, ok := fanotify.DFIDName(buf[metaLen:evLen]); ok && name != "" && name != "." {
			applyEvent(mask, id, name)
		}
		buf = buf[evLen:]
	}
}

// lostEvents marks every root for a rebuild at its next look. Called with
// index.mu.
func lostEvents(why string) {
	for _, r := range index.roots {
		r.stale = true
	}
	ScanNotice(why + ": the index of the workspace's protected entries is rebuilt at its next run")
}

// applyEvent applies one event on the entry name of the directory id.
// Called with index.mu.
func applyEvent(mask uint64, id, name string) {
	d, ok := index.dirs[id]
	if !ok || d.root.stale || d.root.broken != "" {
		return // a directory no longer in a root (moved out), or rebuilt anyway
	}
	r, p := d.root, filepath.Join(d.path, name)
	if pathutil.WithinAny(p, r.skip) {
		return
	}
	if mask&(unix.FAN_MOVED_FROM|unix.FAN_DELETE) != 0 {
		forgetBelow(r, p, mask&unix.FAN_ONDIR != 0)
	}
	if mask&(unix.FAN_CREATE|unix.FAN_MOVED_TO) != 0 {
		lookAt(r, p)
	}
}

// forgetBelow drops what the index knows at and below p, a directory when
// dir. Called with index.mu.
func forgetBelow(r *indexRoot, p string, dir bool) {
	for f := range r.found {
		if pathutil.Within(p, f) {
			delete(r.found, f)
		}
	}
	if !dir {
		return
	}
	for dir, id := range index.ids {
		if pathutil.Within(p, dir) {
			delete(index.ids, dir)
			if index.dirs[id].path == dir {
				delete(index.dirs, id)
			}
		}
	}
}

// lookAt indexes p, an entry that appeared in r: a protected entry is
// recorded, a directory walked (each directory marked before it is
// listed). Called with index.mu.
func lookAt(r *indexRoot, p string) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return // gone again: its removal is queued
	}
	index.seq++
	parent := filepath.Dir(p)
	rel, _ := filepath.Rel(r.path, parent)
	if rel == "." {
		rel = ""
	}
	mode := st.Mode & unix.S_IFMT
	e := DirEntry{Name: filepath.Base(p), Dir: mode == unix.S_IFDIR, Regular: mode == unix.S_IFREG}
	if r.holds(rel, e) {
		if parent != r.path {
			if _, ok := r.found[p]; !ok {
				r.found[p] = index.seq
			}
		}
		return
	}
	if !e.Dir {
		return
	}
	found, cut := walkTree(r.path, p, r.skip, -1, markAndList(r), WalkMade)
	if cut && r.broken == "" {
		r.broken = fmt.Sprintf("%s is larger than the scan's bound", p)
	}
	for _, f := range found {
		if _, ok := r.found[f]; !ok {
			r.found[f] = index.seq
		}
	}
}

// IndexServes says whether the index serves root (tests: a lingering
// process keeps it).
func IndexServes(root string) bool {
	index.mu.Lock()
	defer index.mu.Unlock()
	for _, r := range index.roots {
		if r.path == root && r.broken == "" {
			return true
		}
	}
	return false
}
