package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/wardenhq/warden/internal/pathutil"
	"golang.org/x/sys/unix"
)

// The write record. Warden keeps what a command changes in the writable
// roots so it can be undone; listing a large workspace before and after
// each run to find that out costs more than the run. Instead the filter
// sends every call that can change a file tree by name (recordcalls_linux.go)
// to the supervisor, which for each
//
//  1. copies the path out of the caller's memory and resolves it from the
//     caller's working directory, descriptor or root (/proc/TID/...), one
//     component at a time as the kernel does, /proc/self meaning the caller,
//  2. when it lies in a recorded root, reports it to the launcher over the
//     record socket and waits: the launcher keeps the file as it is now
//     (the state before the run: nothing changes a file without one of
//     these calls first), and
//  3. lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
//
// The record costs what the command changes, not the size of the tree.
// It is a record, not a boundary: Landlock and the mount view decide what
// the call may do, exactly as without it. The kernel reads the path again
// when the call goes on, so a program that rewrites the path from a second
// thread in that moment can keep a change out of the record (not out of
// the sandbox). A path that cannot be resolved fails the call with the
// error the kernel would give; a launcher that cannot be told fails it
// with EIO: never an unrecorded change by accident.

// RecordEnv, in the helper's own environment, names the descriptor of its
// end of the record socket.
const RecordEnv = "WARDEN_RECORD_FD"

// Write intents as the record socket carries them: one byte, the path,
// a NUL.
const (
	IntentEntry = 'e' // the entry at the path may be made, written, removed or chmodded
	IntentTree  = 't' // the entry may move, with everything below it
	// IntentLinked: a file outside the roots may be written or chmodded,
	// and it has other names (hard links) on a root's file system, which
	// change with it.
	IntentLinked = 'h'
	// IntentNew: nothing is at the path in a root; the call may make it.
	// Nothing needs keeping, so the call goes on without an answer.
	IntentNew = 'n'
)

// RecordAck is the launcher's answer once it has kept what the paths hold.
const RecordAck = 'k'

// RecordMessageMax bounds one report: a call names at most two paths.
const RecordMessageMax = 2 * (unix.PathMax + 2)

// writeRecord is the supervisor's side of the record.
type writeRecord struct {
	roots []string
	devs  map[uint64]bool // the roots' file systems
	calls map[int]recordedCall
	mu    sync.Mutex // one report at a time on conn
	conn  int
	sent  map[string]bool // reports already answered: a second changes nothing
}

const maxSent = 1 << 16

// RecordSupported reports whether the kernel can send calls to a
// supervisor (seccomp user notification with CONTINUE, 5.5).
func RecordSupported() bool { return notifySupported() }

// recordFor connects the spec's record to the launcher's socket (nil: the
// spec records nothing).
func recordFor(spec *Spec) (*writeRecord, error) {
	if len(spec.RecordRoots) == 0 {
		return nil, nil
	}
	fd, err := strconv.Atoi(os.Getenv(RecordEnv))
	if err == nil {
		var typ int
		if typ, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && typ != unix.SOCK_SEQPACKET {
			err = fmt.Errorf("descriptor %d is not a seqpacket socket", fd)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox helper: a write record asked for without the launcher's record socket: %v", err)
	}
	return newWriteRecord(spec.RecordRoots, fd), nil
}

func newWriteRecord(roots []string, conn int) *writeRecord {
	w := &writeRecord{roots: roots, devs: map[uint64]bool{}, calls: recordedCalls(), conn: conn, sent: map[string]bool{}}
	for _, root := range roots {
		var st unix.Stat_t
		if unix.Stat(root, &st) == nil {
			w.devs[st.Dev] = true
		}
	}
	return w
}

// intent is how a path the call may change is reported: "" for a path
// outside the roots whose change no root shows.
func (w *writeRecord) intent(p string, a pathArg) string {
	switch {
	case w.within(p) && a.tree:
		return string(rune(IntentTree)) + p
	case w.within(p):
		var st unix.Stat_t
		if unix.Lstat(p, &st) == unix.ENOENT {
			return string(rune(IntentNew)) + p
		}
		return string(rune(IntentEntry)) + p
	case a.content && w.linkedIn(p):
		return string(rune(IntentLinked)) + p
	}
	return ""
}

// linkedIn reports a regular file with more than one name on a root's
// file system: one of its names may be in a root.
func (w *writeRecord) linkedIn(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 && w.devs[st.Dev]
}

// record handles one trapped call: true lets it go on, else it fails with
// the errno.
func (w *writeRecord) record(s *supervisor, n notif, c recordedCall) (bool, unix.Errno) {
	var intents []string
	if c.fd >= 0 {
		p, err := os.Readlink("/proc/" + strconv.Itoa(n.pid) + "/fd/" + strconv.Itoa(int(int32(n.args[c.fd]))))
		if err != nil {
			return false, unix.EBADF
		}
		if in := w.intent(p, pathArg{content: true}); in != "" {
			intents = append(intents, in)
		}
	}
	flags := uint64(0)
	if c.flags >= 0 {
		flags = n.args[c.flags]
	}
	inRoot := false
	if c.how {
		how, errno := readMem(n.pid, n.args[2], 24)
		if errno != 0 {
			return false, errno
		}
		flags = binary.NativeEndian.Uint64(how[0:])
		if flags&openWriteFlags == 0 {
			return true, 0
		}
		inRoot = binary.NativeEndian.Uint64(how[16:])&unix.RESOLVE_IN_ROOT != 0
	}
	for _, a := range c.paths {
		p, errno := readPath(n.pid, n.args[a.path])
		if errno != 0 {
			return false, errno
		}
		dirfd := unix.AT_FDCWD
		if a.dirfd >= 0 {
			dirfd = int(int32(n.args[a.dirfd]))
		}
		emptyPath := (a.last == atFollow || a.last == atNoFollow) && flags&unix.AT_EMPTY_PATH != 0
		target, errno := resolveFor(n.pid, dirfd, p, followsLast(a.last, flags), inRoot, emptyPath)
		if errno != 0 {
			return false, errno
		}
		if target == "" {
			continue
		}
		if in := w.intent(target, a); in != "" {
			intents = append(intents, in)
		}
	}
	if len(intents) == 0 || !s.valid(n.id) {
		return true, 0
	}
	return w.report(intents)
}

// followsLast says whether the kernel follows a link at the path's end.
func followsLast(l lastLink, flags uint64) bool {
	switch l {
	case follow:
		return true
	case openFollow:
		return flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
	case atFollow:
		return flags&unix.AT_SYMLINK_FOLLOW != 0
	case atNoFollow:
		return flags&unix.AT_SYMLINK_NOFOLLOW == 0
	}
	return false
}

func (w *writeRecord) within(p string) bool { return pathutil.WithinAny(p, w.roots) }

// close ends the reports (a report after it fails its call with EIO).
func (w *writeRecord) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn >= 0 {
		unix.Close(w.conn)
		w.conn = -1
	}
}

// report tells the launcher and waits for its answer.
func (w *writeRecord) report(intents []string) (bool, unix.Errno) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var msg []byte
	wait := false // only a path that holds something needs an answer
	for _, in := range intents {
		if !w.sent[in] {
			msg = append(append(msg, in...), 0)
			wait = wait || in[0] != IntentNew
		}
	}
	if len(msg) == 0 {
		return true, 0
	}
	if w.conn < 0 {
		return false, unix.EIO
	}
	if _, err := unix.Write(w.conn, msg); err != nil {
		return false, unix.EIO
	}
	if wait {
		var ack [1]byte
		if n, err := unix.Read(w.conn, ack[:]); err != nil || n != 1 || ack[0] != RecordAck {
			return false, unix.EIO
		}
	}
	if len(w.sent) >= maxSent {
		clear(w.sent)
	}
	for _, in := range intents {
		w.sent[in] = true
		if in[0] == IntentNew {
			// Its state before the run is known: a write once it exists
			// need not be reported.
			w.sent[string(rune(IntentEntry))+in[1:]] = true
		}
	}
	return true, 0
}

// readPath copies a NUL-terminated path out of the caller's memory, a page
// at a time (the string may end just before an unmapped page).
func readPath(pid int, addr uint64) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	for len(out) < unix.PathMax {
		n := 4096 - int(addr%4096)
		chunk, errno := readMem(pid, addr, n)
		if errno != 0 {
			return "", errno
		}
		if i := bytes.IndexByte(chunk, 0); i >= 0 {
			return string(append(out, chunk[:i]...)), 0
		}
		out = append(out, chunk...)
		addr += uint64(n)
	}
	return "", unix.ENAMETOOLONG
}
