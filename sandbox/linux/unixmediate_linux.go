package linux

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unix-socket mediation. Landlock before ABI 9 cannot restrict connect() or
// sendto() to a pathname unix socket, and a read-only mount does not stop
// them either, so a command could reach any host service whose socket it
// can name (docker.sock, an ssh-agent deep in /tmp, a socket a host process
// bound in the workspace). The filter sends every connect, sendmsg and
// sendmmsg and every sendto with an address to a supervisor: a goroutine of the helper
// (pid 1 of the sandbox's pid namespace), on threads the filter does not
// cover. For each call it
//
//  1. takes the command's socket itself (pidfd_getfd: the same open file,
//     so its options, its bound address and O_NONBLOCK are the command's),
//  2. copies the address (and for a send the data and control messages)
//     out of the command's memory once, and checks with
//     SECCOMP_IOCTL_NOTIF_ID_VALID that the caller is still the one that
//     trapped,
//  3. resolves a pathname against the caller's cwd (/proc/TID/cwd) to an
//     O_PATH descriptor, which pins the socket's inode,
//  4. allows it only when a socket bound inside the sandbox owns that inode
//     (see boundInside), and
//  5. performs the call on that socket with the address /proc/self/fd/N of
//     the pinned inode, and answers with its result.
//
// The kernel never re-reads anything the command could rewrite: a thread
// swapping the address, the msghdr or the descriptor after the check
// changes nothing, because the supervisor's copy is what is used. Nothing
// is answered with CONTINUE. Abstract sockets are checked the same way when
// the sandbox shares the host's network namespace (with its own, only the
// sandbox's abstract sockets exist).
//
// The helper supervises, not the launcher: it already shares the command's
// mount, pid and network namespaces (paths, /proc/TID and sock_diag mean
// what they mean to the command, with no translation through
// /proc/PID/root), it installs the filter so the listener is its own
// without a hand-over, and it lives exactly as long as the command.

// SECCOMP_IOCTL_NOTIF_ID_VALID: SECCOMP_IOW(2, __u64).
const ioctlNotifIDValid = 0x40082102

// The largest address, message, control data and iovec count the
// supervisor copies; past them the call fails as the kernel would.
const (
	maxSockaddr = 128 // sizeof(struct sockaddr_storage)
	maxSendData = 4 << 20
	maxControl  = 64 << 10
	maxIovecs   = 1024 // UIO_MAXIOV
)

var notifyProbe struct {
	once            sync.Once
	ok              bool
	notifSize, resp int
}

// notifySupported reports whether the kernel offers what the supervisor
// needs: seccomp user notification (5.0) and pidfd_getfd (5.6).
func notifySupported() bool {
	notifyProbe.once.Do(func() {
		var sizes struct{ notif, resp, data uint16 }
		if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes))); e != 0 {
			return
		}
		if sizes.notif < 80 || sizes.resp < 24 {
			return
		}
		if _, _, e := unix.Syscall(unix.SYS_PIDFD_GETFD, ^uintptr(0), 0, 0); e != unix.EBADF {
			return
		}
		notifyProbe.ok = true
		notifyProbe.notifSize, notifyProbe.resp = int(sizes.notif), int(sizes.resp)
	})
	return notifyProbe.ok
}

// SocketMediation reports whether a namespaced sandbox mediates unix
// sockets here. From Landlock ABI 9 Landlock refuses sockets bound outside
// itself, and a supervisor performing connects would bypass that rule.
func SocketMediation() bool {
	return EffectiveLandlockABI() < 9 && notifySupported()
}

// MediationOffForTest makes the launcher ask for the scan-and-mask
// fallback, so tests can drive it on a kernel that mediates.
var MediationOffForTest bool

// MediateFor says whether a run with these layers mediates unix sockets.
func MediateFor(l Layers) bool {
	return l.Namespaces && l.Seccomp && SocketMediation() && !MediationOffForTest
}

// matchFilter makes the helper's filter what the spec asks for: a spare
// prepared it for the usual answer.
func matchFilter(spec *Spec, pre *prepared) error {
	record := len(spec.RecordRoots) > 0
	if spec.MediateSockets == pre.mediate && record == pre.record {
		return nil
	}
	if spec.MediateSockets && !(pre.namespaced && SocketMediation()) {
		return fmt.Errorf("sandbox helper: unix-socket mediation asked for, but this kernel or sandbox cannot do it")
	}
	if record && !RecordSupported() {
		return fmt.Errorf("sandbox helper: a write record asked for, but this kernel cannot trap calls to a supervisor")
	}
	filter, err := seccompProgram(filterOptions{network: pre.network, mediateUnix: spec.MediateSockets, recordWrites: record})
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	pre.filter, pre.mediate, pre.record = filter, spec.MediateSockets, record
	prepareSupervisor(pre)
	return nil
}

// loadFilter installs the command's seccomp filter on the helper's locked
// thread, with a listener when calls go to the supervisor.
func loadFilter(pre *prepared) error {
	if !pre.mediate && !pre.record {
		return installSeccomp(pre.filter)
	}
	fd, err := installSeccompListener(pre.filter)
	if err != nil {
		return err
	}
	pre.listener = fd
	return nil
}

// hostDiagFD is where a helper in its own network namespace finds a
// sock_diag socket of the launcher's (the host's) network namespace: the
// first descriptor after the spec pipe, or after the forwarder's socket
// (forwardFD) under network ask. Launcher and helper both know the mode.
func hostDiagFD(network Network) int {
	if network == NetworkAsk {
		return forwardFD + 1
	}
	return forwardFD
}

// inheritedHostDiag returns the host's sock_diag socket the launcher passed
// (-1: none): only a netlink sock_diag socket at hostDiagFD counts.
func inheritedHostDiag(network Network) int {
	fd := hostDiagFD(network)
	if d, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || d != unix.AF_NETLINK {
		return -1
	}
	if p, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); err != nil || p != unix.NETLINK_SOCK_DIAG {
		return -1
	}
	return fd
}

// supervisor answers the filter's notifications.
type supervisor struct {
	listener *os.File
	// privateNet: the sandbox has its own network namespace, so every unix
	// socket in it was made inside.
	privateNet bool
	network    bool
	// onlyPort, under network ask, is the one TCP port a connect may name
	// (the loopback forwarder's): the supervisor connects for the command,
	// so it must refuse what the command's Landlock rule would.
	onlyPort int
	self     int
	// hostDiag lists the host's unix sockets (-1: unknown); hostMu keeps
	// one request at a time on it.
	hostDiag int
	hostMu   sync.Mutex
	known    insideFiles
	// record reports the paths a call may change (nil: no record).
	record *writeRecord
}

// insideFiles remembers socket files proven bound inside, each by an
// O_PATH descriptor held open: while it is held the inode cannot be freed
// and its number given to another file, and the socket bound to an inode
// never changes (bind always makes a new one), so a file with the same
// device and inode is the same socket. A later connect skips sock_diag.
type insideFiles struct {
	mu    sync.Mutex
	fds   map[fileID]int
	order []fileID
}

type fileID struct{ dev, ino uint64 }

const maxInsideFiles = 256

func (k *insideFiles) has(st *unix.Stat_t) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.fds[fileID{st.Dev, st.Ino}]
	return ok
}

func (k *insideFiles) add(st *unix.Stat_t, fd int) {
	held, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	id := fileID{st.Dev, st.Ino}
	if _, ok := k.fds[id]; ok {
		unix.Close(held)
		return
	}
	if k.fds == nil {
		k.fds = map[fileID]int{}
	}
	if len(k.order) >= maxInsideFiles {
		unix.Close(k.fds[k.order[0]])
		delete(k.fds, k.order[0])
		k.order = k.order[1:]
	}
	k.fds[id] = held
	k.order = append(k.order, id)
}

// prepareSupervisor readies the runtime for the supervisor before the spec
// arrives (in a spare, ahead of need): a second P, and the poller its
// listener will wait in.
func prepareSupervisor(pre *prepared) {
	if !pre.mediate && !pre.record {
		return
	}
	runtime.GOMAXPROCS(2)
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
}

// startSupervisor starts answering notifications once the command runs
// (a call it makes before waits in the kernel's queue). It returns at once.
func startSupervisor(pre *prepared, record *writeRecord) {
	if pre.listener < 0 {
		return
	}
	if record != nil {
		// The helper starts without a collector (GOGC=off in its
		// environment); a supervisor that answers every file a command
		// writes allocates for each, for as long as the command runs.
		debug.SetGCPercent(100)
	} else {
		// Mediation alone: the listener waits in the runtime's poller, so a
		// notification wakes a goroutine without a thread parked in an
		// ioctl; a second P lets a handler run while another blocks in a
		// connect the command asked for. Set before the file is made: only
		// then does it wait in the poller.
		unix.SetNonblock(pre.listener, true)
	}
	s := &supervisor{listener: os.NewFile(uintptr(pre.listener), "seccomp-notify"),
		privateNet: pre.network != NetworkOn, network: pre.network != NetworkOff, self: os.Getpid(), hostDiag: -1,
		record: record}
	if pre.network == NetworkAsk {
		s.onlyPort = ForwardPort
	}
	if s.privateNet {
		s.hostDiag = inheritedHostDiag(pre.network)
	} else {
		s.hostDiag = -2 // the host's namespace is this one
	}
	if record != nil {
		go s.serveBlocking()
		return
	}
	go s.serve()
}

// serveBlocking answers a filter that records, on a thread of its own that
// waits in the kernel: a command that changes many files waits for each
// answer, and a wake-up through the runtime's poller and a goroutine per
// call would add to every one. A mediated call, which may block, still
// gets a goroutine.
func (s *supervisor) serveBlocking() {
	runtime.LockOSThread()
	rc, err := s.listener.SyscallConn()
	if err != nil {
		s.listener.Close()
		return
	}
	buf := make([]byte, max(notifyProbe.notifSize, 80))
	rc.Control(func(fd uintptr) {
		for {
			clear(buf) // the kernel wants it zeroed
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&buf[0])))
			switch errno {
			case 0:
				n := parseNotif(buf)
				if _, ok := s.recorded(n); ok {
					s.handle(n)
				} else {
					go s.handle(n)
				}
			case unix.EINTR, unix.ENOENT, unix.EAGAIN: // the caller died before it was read
			default:
				return
			}
		}
	})
}

func (s *supervisor) serve() {
	rc, err := s.listener.SyscallConn()
	if err != nil {
		s.listener.Close() // trapped calls then fail with ENOSYS: closed, not open
		return
	}
	for {
		buf := make([]byte, max(notifyProbe.notifSize, 80))
		var errno unix.Errno
		err := rc.Read(func(fd uintptr) bool {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, _ := unix.Poll(pfd, 0); n == 0 {
				return false // wait in the poller
			}
			_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&buf[0])))
			return true
		})
		if err != nil {
			s.listener.Close()
			return
		}
		switch errno {
		case 0:
			go s.handle(parseNotif(buf))
		case unix.EINTR, unix.ENOENT, unix.EAGAIN: // the caller died before it was read
		default:
			s.listener.Close()
			return
		}
	}
}

// notif is struct seccomp_notif.
type notif struct {
	id   uint64
	pid  int
	nr   int32
	args [6]uint64
}

func parseNotif(b []byte) notif {
	ne := binary.NativeEndian
	n := notif{id: ne.Uint64(b[0:]), pid: int(ne.Uint32(b[8:])), nr: int32(ne.Uint32(b[16:]))}
	for i := range n.args {
		n.args[i] = ne.Uint64(b[32+8*i:])
	}
	return n
}

// notifContinue is SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel performs
// the call itself.
const notifContinue = 1

func (s *supervisor) handle(n notif) {
	resp := make([]byte, max(notifyProbe.resp, 24))
	ne := binary.NativeEndian
	ne.PutUint64(resp[0:], n.id)
	if c, ok := s.recorded(n); ok {
		if cont, errno := s.record.record(s, n, c); cont {
			ne.PutUint32(resp[20:], notifContinue)
		} else {
			ne.PutUint32(resp[16:], uint32(-int32(errno)))
		}
	} else {
		val, errno := s.decide(n)
		ne.PutUint64(resp[8:], uint64(val))
		ne.PutUint32(resp[16:], uint32(-int32(errno)))
	}
	rc, err := s.listener.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		// ENOENT: the caller was killed meanwhile; nothing to answer.
		unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp[0])))
	})
}

// recorded returns the write-record entry of a trapped call, if it is one.
func (s *supervisor) recorded(n notif) (recordedCall, bool) {
	if s.record == nil {
		return recordedCall{}, false
	}
	c, ok := s.record.calls[int(n.nr)]
	return c, ok
}

// valid reports whether the notification's caller is still waiting: its
// pid then still names it, so what was read through the pid was its.
func (s *supervisor) valid(id uint64) bool {
	ok := false
	if rc, err := s.listener.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, ioctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
			ok = e == 0
		})
	}
	return ok
}

// call is one trapped call being decided.
type call struct {
	n      notif
	pidfd  int
	sock   int // the command's socket, fetched
	domain int
	typ    int
	closer []int
}

func (c *call) close() {
	for _, fd := range c.closer {
		unix.Close(fd)
	}
}

// decide performs the trapped call for the command and returns its result.
func (s *supervisor) decide(n notif) (int64, unix.Errno) {
	c := &call{n: n, pidfd: -1, sock: -1}
	defer c.close()
	pidfd, err := openCaller(n.pid)
	if err != nil {
		return 0, unix.ESRCH
	}
	c.pidfd = pidfd
	c.closer = append(c.closer, pidfd)
	if !s.valid(n.id) { // the pid was reused: pidfd names another process
		return 0, unix.ESRCH
	}
	sock, err := unix.PidfdGetfd(pidfd, int(int32(n.args[0])), 0)
	if err != nil {
		return 0, errnoOf(err, unix.EBADF)
	}
	c.sock = sock
	c.closer = append(c.closer, sock)
	if c.domain, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil {
		return 0, errnoOf(err, unix.ENOTSOCK)
	}
	if c.typ, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		return 0, errnoOf(err, unix.ENOTSOCK)
	}
	if c.domain != unix.AF_UNIX && !s.network {
		return 0, unix.EACCES // the filter lets no such socket be made
	}
	switch int(n.nr) {
	case unix.SYS_CONNECT:
		return s.connect(c)
	case unix.SYS_SENDTO:
		return s.sendto(c)
	case unix.SYS_SENDMSG:
		return s.sendmsg(c)
	case unix.SYS_SENDMMSG:
		return s.sendmmsg(c)
	}
	return 0, unix.ENOSYS
}

func (s *supervisor) connect(c *call) (int64, unix.Errno) {
	addrlen := int64(int32(c.n.args[2]))
	if addrlen < 0 || addrlen > maxSockaddr {
		return 0, unix.EINVAL
	}
	sa, errno := readMem(c.n.pid, c.n.args[1], int(addrlen))
	if errno != 0 {
		return 0, errno
	}
	sa, errno = s.checkAddr(c, sa)
	if errno != 0 {
		return 0, errno
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(c.sock), bufPtr(sa), uintptr(len(sa)))
	runtime.KeepAlive(sa)
	return 0, e
}

func (s *supervisor) sendto(c *call) (int64, unix.Errno) {
	size, flags, addrlen := c.n.args[2], int(int32(c.n.args[3])), int64(int32(c.n.args[5]))
	if addrlen < 0 || addrlen > maxSockaddr {
		return 0, unix.EINVAL
	}
	if size > maxSendData {
		if c.typ != unix.SOCK_STREAM {
			return 0, unix.EMSGSIZE
		}
		size = maxSendData // a stream may take part of it
	}
	data, errno := readMem(c.n.pid, c.n.args[1], int(size))
	if errno != 0 {
		return 0, errno
	}
	sa, errno := readMem(c.n.pid, c.n.args[4], int(addrlen))
	if errno != 0 {
		return 0, errno
	}
	if sa, errno = s.checkAddr(c, sa); errno != 0 {
		return 0, errno
	}
	sent, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(c.sock), bufPtr(data), uintptr(len(data)),
		uintptr(flags|unix.MSG_NOSIGNAL), bufPtr(sa), uintptr(len(sa)))
	runtime.KeepAlive(data)
	runtime.KeepAlive(sa)
	return s.sent(c, flags, sent, e)
}

// sent turns a send's result into the command's: the supervisor never
// takes SIGPIPE itself, the command gets it as it would have.
func (s *supervisor) sent(c *call, flags int, n uintptr, e unix.Errno) (int64, unix.Errno) {
	if e == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
		unix.Tgkill(pidOfThread(c.n.pid), c.n.pid, unix.SIGPIPE)
	}
	if e != 0 {
		return 0, e
	}
	return int64(n), 0
}

// struct msghdr and struct iovec on 64-bit Linux.
const (
	msghdrSize = 56
	iovecSize  = 16
)

func (s *supervisor) sendmsg(c *call) (int64, unix.Errno) {
	return s.sendOne(c, c.n.args[1], int(int32(c.n.args[2])))
}

// struct mmsghdr: a msghdr, then the bytes sent (msg_len), padded.
const (
	mmsghdrSize = 64
	msgLenOff   = 56
)

// sendmmsg sends each message as sendmsg does and writes each msg_len
// back; it stops at the first failure, which it reports only when nothing
// was sent (as the kernel does). glibc's resolver sends its two queries so.
func (s *supervisor) sendmmsg(c *call) (int64, unix.Errno) {
	vec, vlen, flags := c.n.args[1], min(c.n.args[2], maxIovecs), int(int32(c.n.args[3]))
	var sent int64
	for i := range vlen {
		hdr := vec + i*mmsghdrSize
		n, errno := s.sendOne(c, hdr, flags)
		if errno != 0 {
			if sent == 0 {
				return 0, errno
			}
			break
		}
		if errno := writeMem(c.n.pid, hdr+msgLenOff, binary.NativeEndian.AppendUint32(nil, uint32(n))); errno != 0 {
			return sent, 0 // sent, but the count could not be written back
		}
		sent++
	}
	return sent, 0
}

// sendOne performs sendmsg for the msghdr at addr in the command's memory.
func (s *supervisor) sendOne(c *call, addr uint64, flags int) (int64, unix.Errno) {
	raw, errno := readMem(c.n.pid, addr, msghdrSize)
	if errno != 0 {
		return 0, errno
	}
	ne := binary.NativeEndian
	namePtr, nameLen := ne.Uint64(raw[0:]), uint64(ne.Uint32(raw[8:]))
	iovPtr, iovLen := ne.Uint64(raw[16:]), ne.Uint64(raw[24:])
	ctlPtr, ctlLen := ne.Uint64(raw[32:]), ne.Uint64(raw[40:])
	if iovLen > maxIovecs {
		return 0, unix.EMSGSIZE
	}
	if ctlLen > maxControl {
		return 0, unix.ENOBUFS
	}
	if nameLen > maxSockaddr {
		return 0, unix.EINVAL
	}
	iovs, errno := readMem(c.n.pid, iovPtr, int(iovLen)*iovecSize)
	if errno != 0 {
		return 0, errno
	}
	var data []byte
	for i := range int(iovLen) {
		base, n := ne.Uint64(iovs[i*iovecSize:]), ne.Uint64(iovs[i*iovecSize+8:])
		if room := uint64(maxSendData - len(data)); n > room {
			if c.typ != unix.SOCK_STREAM {
				return 0, unix.EMSGSIZE
			}
			n = room
		}
		b, errno := readMem(c.n.pid, base, int(n))
		if errno != 0 {
			return 0, errno
		}
		data = append(data, b...)
	}
	var sa []byte
	if namePtr != 0 && nameLen > 0 {
		if sa, errno = readMem(c.n.pid, namePtr, int(nameLen)); errno != 0 {
			return 0, errno
		}
		if sa, errno = s.checkAddr(c, sa); errno != 0 {
			return 0, errno
		}
	}
	var ctl []byte
	if ctlPtr != 0 && ctlLen > 0 {
		if ctl, errno = readMem(c.n.pid, ctlPtr, int(ctlLen)); errno != 0 {
			return 0, errno
		}
		if errno = c.translateRights(ctl); errno != 0 {
			return 0, errno
		}
	}
	if !s.valid(c.n.id) {
		return 0, unix.ESRCH
	}
	var msg unix.Msghdr
	var iov unix.Iovec
	if len(data) > 0 {
		iov.Base = &data[0]
		iov.SetLen(len(data))
		msg.Iov = &iov
		msg.SetIovlen(1)
	}
	if len(sa) > 0 {
		msg.Name = &sa[0]
		msg.Namelen = uint32(len(sa))
	}
	if len(ctl) > 0 {
		msg.Control = &ctl[0]
		msg.SetControllen(len(ctl))
	}
	sent, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(c.sock), uintptr(unsafe.Pointer(&msg)), uintptr(flags|unix.MSG_NOSIGNAL))
	runtime.KeepAlive(data)
	runtime.KeepAlive(sa)
	runtime.KeepAlive(ctl)
	return s.sent(c, flags, sent, e)
}

// translateRights replaces the descriptor numbers of SCM_RIGHTS messages,
// which name the command's descriptors, with the supervisor's copies of
// the same files, and refuses SCM_CREDENTIALS naming another process.
func (c *call) translateRights(ctl []byte) unix.Errno {
	ne := binary.NativeEndian
	const hdr = 16 // struct cmsghdr: len, level, type
	for off := 0; off+hdr <= len(ctl); {
		l := int(ne.Uint64(ctl[off:]))
		if l < hdr || off+l > len(ctl) {
			return unix.EINVAL
		}
		level, typ := int32(ne.Uint32(ctl[off+8:])), int32(ne.Uint32(ctl[off+12:]))
		if level == unix.SOL_SOCKET && typ == unix.SCM_CREDENTIALS && l >= hdr+4 {
			// The kernel checks the claimed pid against the sender, the
			// supervisor, which may name any pid of the sandbox: hold it
			// to the command's own, as the kernel would hold the command.
			if int(int32(ne.Uint32(ctl[off+hdr:]))) != pidOfThread(c.n.pid) {
				return unix.EPERM
			}
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_RIGHTS {
			for p := off + hdr; p+4 <= off+l; p += 4 {
				fd, err := unix.PidfdGetfd(c.pidfd, int(int32(ne.Uint32(ctl[p:]))), 0)
				if err != nil {
					return errnoOf(err, unix.EBADF)
				}
				c.closer = append(c.closer, fd)
				ne.PutUint32(ctl[p:], uint32(fd))
			}
		}
		off += (l + 7) &^ 7
	}
	return 0
}

// checkAddr decides an address for the call's socket and returns the one
// to use: for a pathname, /proc/self/fd/N of the socket it resolves to.
func (s *supervisor) checkAddr(c *call, sa []byte) ([]byte, unix.Errno) {
	if c.domain != unix.AF_UNIX || len(sa) <= 2 ||
		binary.NativeEndian.Uint16(sa) != unix.AF_UNIX {
		// Not a unix address (AF_UNSPEC dissolves a datagram association):
		// the kernel judges it as it would the command's, but for the port
		// rule under ask, which Landlock would have applied to the command.
		if s.onlyPort != 0 && (c.domain == unix.AF_INET || c.domain == unix.AF_INET6) && len(sa) >= 4 &&
			binary.NativeEndian.Uint16(sa) != unix.AF_UNSPEC && int(binary.BigEndian.Uint16(sa[2:4])) != s.onlyPort {
			return nil, unix.EACCES
		}
		if !s.valid(c.n.id) {
			return nil, unix.ESRCH
		}
		return sa, 0
	}
	if sa[2] == 0 { // abstract
		if !s.privateNet {
			name := sa[2:]
			inside, err := s.boundInside(func(u unixSock) bool { return string(u.name) == string(name) })
			if err != 0 {
				return nil, err
			}
			if !inside {
				return nil, unix.EPERM // as Landlock's abstract-socket scope answers
			}
		}
		if !s.valid(c.n.id) {
			return nil, unix.ESRCH
		}
		return sa, 0
	}
	path := sa[2:]
	for i, b := range path {
		if b == 0 {
			path = path[:i]
			break
		}
	}
	fd, errno := openSocketPath(c.n.pid, string(path))
	if errno != 0 {
		return nil, errno
	}
	c.closer = append(c.closer, fd)
	if !s.valid(c.n.id) { // what was read and resolved was the caller's
		return nil, unix.ESRCH
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, errnoOf(err, unix.EACCES)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, unix.ECONNREFUSED
	}
	if s.known.has(&st) {
		return sockaddrOfFD(fd), 0
	}
	file := SocketFileOf(&st)
	inside, errno := s.boundInside(func(u unixSock) bool { return u.hasVFS && u.vfs == file })
	if errno != 0 {
		return nil, errno
	}
	if inside {
		s.known.add(&st, fd)
	}
	if !inside {
		if s.boundOutside(file) {
			return nil, unix.EACCES
		}
		return nil, unix.ECONNREFUSED // nothing there, as the kernel would say
	}
	return sockaddrOfFD(fd), 0
}

// openSocketPath resolves path as the thread tid would, relative to its
// working directory, to an O_PATH descriptor.
func openSocketPath(tid int, path string) (int, unix.Errno) {
	if path == "" {
		return -1, unix.ENOENT
	}
	dir := unix.AT_FDCWD
	if path[0] != '/' {
		cwd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err, unix.ESRCH)
		}
		defer unix.Close(cwd)
		dir = cwd
	}
	fd, err := unix.Openat(dir, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errnoOf(err, unix.ENOENT)
	}
	return fd, 0
}

// sockaddrOfFD is a sockaddr_un naming the pinned file: the kernel follows
// the magic link to the same inode, whatever the path now holds.
func sockaddrOfFD(fd int) []byte {
	path := "/proc/self/fd/" + strconv.Itoa(fd)
	sa := make([]byte, 2+len(path)+1)
	binary.NativeEndian.PutUint16(sa, unix.AF_UNIX)
	copy(sa[2:], path)
	return sa
}

// boundOutside reports whether a socket of the host's network namespace
// is bound to the file, or it cannot be told. A live one outside is
// answered EACCES, a stale one ECONNREFUSED, so a program that cleans up a
// stale socket and binds its own (tmux, an editor's server) still does,
// and one that would remove a live host socket on ECONNREFUSED does not.
// Nothing connects to find out: a host service never sees the attempt.
func (s *supervisor) boundOutside(file SocketFile) bool {
	var socks []unixSock
	var err error
	switch s.hostDiag {
	case -1:
		return true
	case -2:
		socks, err = dumpUnixSockets(udiagShowVFS)
	default:
		s.hostMu.Lock()
		socks, err = dumpUnixSocketsOn(s.hostDiag, udiagShowVFS)
		s.hostMu.Unlock()
	}
	if err != nil {
		return true
	}
	for _, u := range socks {
		if u.hasVFS && u.vfs == file && u.connectable() {
			return true
		}
	}
	return false
}

// boundInside reports whether a unix socket match selects was made inside
// the sandbox. Unix sockets belong to the network namespace they were made
// in: with its own, any the kernel lists here is the sandbox's. Sharing the
// host's, it must also be held by a process of the sandbox's pid
// namespace, the only ones /proc shows the helper.
func (s *supervisor) boundInside(match func(unixSock) bool) (bool, unix.Errno) {
	socks, err := dumpUnixSockets(udiagShowVFS | udiagShowName)
	if err != nil {
		return false, unix.EACCES // cannot tell: refuse
	}
	var found []uint32
	for _, u := range socks {
		if u.connectable() && match(u) {
			found = append(found, u.ino)
		}
	}
	if len(found) == 0 || s.privateNet {
		return len(found) > 0, 0
	}
	held := socketsHeld(s.self)
	for _, ino := range found {
		if held[ino] {
			return true, 0
		}
	}
	return false, 0
}

// socketsHeld lists the socket inodes open in the processes /proc shows
// (the sandbox's pid namespace), but the helper's own.
func socketsHeld(self int) map[uint32]bool {
	held := map[uint32]bool{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return held
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := "/proc/" + p.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range fds {
			link, err := os.Readlink(dir + f.Name())
			if err != nil || len(link) < 9 || link[:8] != "socket:[" {
				continue
			}
			if ino, err := strconv.ParseUint(link[8:len(link)-1], 10, 32); err == nil {
				held[uint32(ino)] = true
			}
		}
	}
	return held
}

// pidOfThread returns the thread group of a thread id (itself if unknown).
func pidOfThread(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return tid
	}
	const key = "\nTgid:\t"
	for i := 0; i+len(key) < len(b); i++ {
		if string(b[i:i+len(key)]) == key {
			j := i + len(key)
			k := j
			for k < len(b) && b[k] >= '0' && b[k] <= '9' {
				k++
			}
			if v, err := strconv.Atoi(string(b[j:k])); err == nil {
				return v
			}
		}
	}
	return tid
}

// pidfdThread is PIDFD_THREAD (6.9): a pidfd for a thread, not its group.
const pidfdThread = unix.O_EXCL

// openCaller opens a pidfd for the thread that trapped: any thread of a
// program may connect. Before 6.9 only a thread group leader has a pidfd,
// so it takes the caller's group, whose descriptor table the thread
// shares unless it was cloned without CLONE_FILES (the address is checked
// all the same, whichever socket is used).
func openCaller(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err == nil {
		return fd, nil
	}
	if tgid := pidOfThread(tid); tgid != tid {
		return unix.PidfdOpen(tgid, 0)
	}
	return unix.PidfdOpen(tid, 0)
}

// readMem copies n bytes at addr out of process pid's memory.
func readMem(pid int, addr uint64, n int) ([]byte, unix.Errno) {
	if n == 0 {
		return nil, 0
	}
	if addr == 0 {
		return nil, unix.EFAULT
	}
	buf := make([]byte, n)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(n)
	got, err := unix.ProcessVMReadv(pid, local, []unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err != nil {
		if err == unix.ESRCH {
			return nil, unix.ESRCH
		}
		return nil, unix.EFAULT
	}
	if got != n {
		return nil, unix.EFAULT
	}
	return buf, 0
}

// writeMem copies b into process pid's memory at addr.
func writeMem(pid int, addr uint64, b []byte) unix.Errno {
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	n, err := unix.ProcessVMWritev(pid, local, []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}, 0)
	if err != nil || n != len(b) {
		return unix.EFAULT
	}
	return 0
}

func bufPtr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

func errnoOf(err error, fallback unix.Errno) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return fallback
}
