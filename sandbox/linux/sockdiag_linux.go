package linux

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

type SocketFile struct{ dev, ino uint32 }

func SocketFileOf(st *unix.Stat_t) SocketFile {
	return SocketFile{dev: unix.Major(st.Dev)<<20 | unix.Minor(st.Dev), ino: uint32(st.Ino)}
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
	vfs        SocketFile
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

// BoundSocketFiles asks the kernel for every unix socket in this network
// namespace bound to a file, and returns those files.
func BoundSocketFiles() (map[SocketFile]bool, error) {
	socks, err := dumpUnixSockets(udiagShowVFS)
	if err != nil {
		return nil, err
	}
	out := map[SocketFile]bool{}
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
						u.vfs = SocketFile{ino: ne.Uint32(a[4:]), dev: ne.Uint32(a[8:])}
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
