package linux

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// A socket file nobody listens on cannot be connected to: unix sockets are
// found by the inode the server bound, and a stale file has none. A
// command can leave thousands of such files in /tmp; masking each would
// cost a mount per file on every later run. keepLive keeps the sockets a
// server is bound to, and drops only those proven dead.
//
// Dead is for good: bind() always makes a new inode, so no server can take
// over a stale socket file. The launcher remembers the dead ones by inode
// and change time and does not probe them again.

// maxDeadCached bounds the dead socket files remembered; past it the
// memory is dropped and rebuilt.
const maxDeadCached = 100_000

// deadSocket is a socket file proven dead: its identity, with the change
// time so a new file that reuses the inode number is not taken for it.
type deadSocket struct {
	dev, ino uint64
	ctime    unix.Timespec
}

// keepLive returns the sockets (paths) that a server is bound to, or that
// cannot be proven dead. The kernel's list of bound sockets in this network
// namespace (sock_diag) settles most without touching them; the rest are
// bound in another namespace (a container, a service with a private
// network, a sandbox) or by nobody, and a connect() tells which:
// ECONNREFUSED means no listener and no datagram socket bound to the file.
func (s *SocketScanner) keepLive(sockets []string) ([]string, error) {
	bound, err := BoundSocketFiles()
	if err != nil {
		bound = nil // probe every one instead
	}
	// A stream socket between bind() and listen() answers ECONNREFUSED
	// too; one that old is not remembered as dead.
	settled := s.now().Add(-racyMarginCoarse)
	live := sockets[:0:0]
	for _, p := range sockets {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if !unreachable(err) {
				live = append(live, p) // keep the mask: the helper will say if it fails
			}
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue // replaced by something that is not a socket
		}
		id := deadSocket{dev: st.Dev, ino: st.Ino, ctime: st.Ctim}
		s.mu.Lock()
		known := s.dead[id]
		s.mu.Unlock()
		if known {
			continue
		}
		if bound[SocketFileOf(&st)] {
			live = append(live, p)
			continue
		}
		alive, err := socketLive(p, &st)
		if err != nil {
			return nil, err
		}
		if alive {
			live = append(live, p)
			continue
		}
		if time.Unix(st.Ctim.Unix()).Before(settled) {
			s.mu.Lock()
			if len(s.dead) >= maxDeadCached {
				clear(s.dead)
			}
			s.dead[id] = true
			s.mu.Unlock()
		}
	}
	return live, nil
}

// socketFile identifies a socket's file as sock_diag reports it: the low 32
// bits of the inode, and the device as the kernel holds it (major << 20 |
// minor), not as stat(2) encodes it. A collision of the truncated inode
// only keeps a dead socket masked.
// socketLive probes the socket file that was (st) at p through an O_PATH
// descriptor, so a long path (sun_path holds 108 bytes) does not matter
// and a file swapped in between is not taken for it.
func socketLive(p string, was *unix.Stat_t) (bool, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return !unreachable(err), nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != was.Dev || st.Ino != was.Ino {
		return true, nil // changed under us: keep the mask
	}
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("cannot check the unix socket %s for a listener: %v", p, err)
	}
	defer unix.Close(s)
	err = unix.Connect(s, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(fd)})
	switch {
	case errors.Is(err, unix.ECONNREFUSED):
		return false, nil // no listener, no datagram socket: dead
	case errors.Is(err, unix.EACCES):
		// No write permission on the socket: the command, with this
		// user's permissions and no capabilities, cannot connect either.
		return false, nil
	}
	// Connected, a full backlog (EAGAIN), a datagram or seqpacket server
	// (EPROTOTYPE), or anything unexpected: keep it masked.
	return true, nil
}
