package sandbox

import (
	"encoding/binary"
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
func (s *socketScanner) keepLive(sockets []string) ([]string, error) {
	bound, err := boundSocketFiles()
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
		if bound[socketFileOf(&st)] {
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
type socketFile struct{ dev, ino uint32 }

func socketFileOf(st *unix.Stat_t) socketFile {
	return socketFile{dev: unix.Major(st.Dev)<<20 | unix.Minor(st.Dev), ino: uint32(st.Ino)}
}

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
		return false, refuse("cannot check the unix socket %s for a listener: %v", p, err)
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

// Linux's unix_diag interface (linux/unix_diag.h).
const (
	udiagShowName = 0x1
	udiagShowVFS  = 0x2
	unixDiagName  = 0
	unixDiagVFS   = 1
)

// unixSock is one unix socket as sock_diag lists it: its inode, the file it
// is bound to (hasVFS), and its address (an abstract one starts with NUL).
type unixSock struct {
	ino        uint32
	typ, state uint8
	vfs        socketFile
	hasVFS     bool
	name       []byte
}

// tcpListen is a listening socket's state in unix_diag_msg.
const tcpListen = 10

// connectable reports whether connect() or a datagram to the socket's
// address reaches this socket: a listener, or a datagram socket. The
// server end of an accepted connection carries the listener's address too,
// and it lives in the network namespace of the client that connected.
func (u unixSock) connectable() bool {
	return u.typ == unix.SOCK_DGRAM || u.state == tcpListen
}

// boundSocketFiles asks the kernel for every unix socket in this network
// namespace bound to a file, and returns those files.
func boundSocketFiles() (map[socketFile]bool, error) {
	socks, err := dumpUnixSockets(udiagShowVFS)
	if err != nil {
		return nil, err
	}
	out := map[socketFile]bool{}
	for _, u := range socks {
		if u.hasVFS {
			out[u.vfs] = true
		}
	}
	return out, nil
}

// dumpUnixSockets lists every unix socket in this network namespace with
// the attributes show asks for (udiagShow*).
func dumpUnixSockets(show uint32) ([]unixSock, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	return dumpUnixSocketsOn(fd, show)
}

// dumpUnixSocketsOn lists the unix sockets of the network namespace the
// sock_diag socket fd was made in. One request at a time per socket.
func dumpUnixSocketsOn(fd int, show uint32) ([]unixSock, error) {
	// nlmsghdr, then unix_diag_req: family, protocol, pad, states, ino,
	// show, cookie[2].
	req := make([]byte, unix.NLMSG_HDRLEN+24)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], 1)
	b := req[unix.NLMSG_HDRLEN:]
	b[0] = unix.AF_UNIX
	ne.PutUint32(b[4:], 0xffffffff) // every state
	ne.PutUint32(b[12:], show)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag request: %w", err)
	}
	var out []unixSock
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		for msg := buf[:n]; len(msg) >= unix.NLMSG_HDRLEN; {
			size := int(ne.Uint32(msg[0:]))
			if size < unix.NLMSG_HDRLEN || size > len(msg) {
				return nil, errors.New("sock_diag reply: malformed message")
			}
			switch ne.Uint16(msg[4:]) {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				return nil, errors.New("sock_diag: the kernel refused the request")
			}
			// unix_diag_msg (16 bytes: family, type, state, pad, ino,
			// cookie), then attributes: length, type, value.
			var u unixSock
			if size >= unix.NLMSG_HDRLEN+16 {
				m := msg[unix.NLMSG_HDRLEN:]
				u.typ, u.state, u.ino = m[1], m[2], ne.Uint32(m[4:])
			}
			for a := msg[min(size, unix.NLMSG_HDRLEN+16):size]; len(a) >= 4; {
				alen := int(ne.Uint16(a[0:]))
				if alen < 4 || alen > len(a) {
					break
				}
				switch ne.Uint16(a[2:]) {
				case unixDiagVFS:
					if alen >= 12 {
						u.vfs = socketFile{ino: ne.Uint32(a[4:]), dev: ne.Uint32(a[8:])}
						u.hasVFS = true
					}
				case unixDiagName:
					u.name = append([]byte(nil), a[4:alen]...)
				}
				a = a[min(len(a), (alen+3)&^3):]
			}
			out = append(out, u)
			msg = msg[min(len(msg), (size+3)&^3):]
		}
	}
}
