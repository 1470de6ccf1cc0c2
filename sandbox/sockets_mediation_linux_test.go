package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/wardenhq/warden/sandbox/linux"
	"golang.org/x/sys/unix"
)

// The mediation suite: host sockets wherever they are (deep in /tmp, in
// /var/tmp, in the workspace, bound after the sandbox started) cannot be
// reached by connect or by a datagram, also by a thread that rewrites the
// address while another calls; sockets the sandbox makes for itself keep
// working.

// withoutMediation makes runs use the scan-and-mask fallback.
func withoutMediation(t *testing.T) {
	t.Helper()
	linux.MediationOffForTest = true
	t.Cleanup(func() { linux.MediationOffForTest = false })
}

func needMediation(t *testing.T) {
	t.Helper()
	if !linux.SocketMediation() {
		t.Skip("this kernel has no seccomp user notification or pidfd_getfd (or Landlock ABI >= 9 covers sockets)")
	}
}

// mediationProbes are the escape probe's extra operations (probe_linux_test.go).
var mediationProbes = map[string]func(args []string) error{
	"dial-unix-type":     probeDialType,
	"send-dgram":         probeSendDgram,
	"dgram-pair":         probeDgramPair,
	"seqpacket-pair":     probeSeqpacketPair,
	"wait-dial":          probeWaitDial,
	"race-connect":       probeRaceConnect,
	"race-sendmsg":       probeRaceSendmsg,
	"pass-fd":            probePassFD,
	"nonblock-dial":      probeNonblockDial,
	"relative-roundtrip": probeRelativeRoundtrip,
	"stale-refused":      probeStaleRefused,
	"mmsg-pair":          probeMmsgPair,
	"mmsg-send":          probeMmsgSend,
	"mmsg-udp":           probeMmsgUDP,
	"send-creds":         probeSendCreds,
	"symlink-roundtrip":  probeSymlinkRoundtrip,
	"thread-roundtrip":   probeThreadRoundtrip,
}

// sendmmsg sends each payload, to sa when it is not nil, in one call, and
// returns how many went and their msg_len as written back.
func sendmmsg(fd int, sa []byte, payloads ...string) (int, []uint32, error) {
	type mmsghdr struct {
		hdr unix.Msghdr
		n   uint32
		_   [4]byte
	}
	msgs := make([]mmsghdr, len(payloads))
	iovs := make([]unix.Iovec, len(payloads))
	for i, p := range payloads {
		b := []byte(p)
		iovs[i].Base = &b[0]
		iovs[i].SetLen(len(b))
		msgs[i].hdr.Iov = &iovs[i]
		msgs[i].hdr.SetIovlen(1)
		if sa != nil {
			msgs[i].hdr.Name = &sa[0]
			msgs[i].hdr.Namelen = uint32(len(sa))
		}
	}
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), 0, 0, 0)
	if e != 0 {
		return 0, nil, e
	}
	var lens []uint32
	for _, m := range msgs {
		lens = append(lens, m.n)
	}
	return int(n), lens, nil
}

func rawSockaddrUnix(path string) []byte {
	w := sockaddrWords(path)
	return (*[112]byte)(unsafe.Pointer(&w))[:2+len(path)+1]
}

// probeMmsgPair: sendmmsg of two datagrams to the probe's own socket.
func probeMmsgPair(args []string) error {
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(srv)
	os.Remove(args[0])
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: args[0]}); err != nil {
		return err
	}
	defer os.Remove(args[0])
	cli, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(cli)
	n, lens, err := sendmmsg(cli, rawSockaddrUnix(args[0]), "first", "second!")
	if err != nil || n != 2 || lens[0] != 5 || lens[1] != 7 {
		return fmt.Errorf("sendmmsg: %d sent, lengths %v, %v", n, lens, err)
	}
	buf := make([]byte, 16)
	for _, want := range []string{"first", "second!"} {
		if m, _, err := unix.Recvfrom(srv, buf, 0); err != nil || string(buf[:m]) != want {
			return fmt.Errorf("received %q, %v; want %q", buf[:m], err, want)
		}
	}
	return nil
}

// probeMmsgSend: sendmmsg to a path (the attack).
func probeMmsgSend(args []string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, _, err = sendmmsg(fd, rawSockaddrUnix(args[0]), "attack-sendmmsg")
	return err
}

// probeMmsgUDP sends two datagrams on a connected UDP socket in one
// sendmmsg, as glibc's resolver sends its A and AAAA queries, to a UDP
// socket of its own on the loopback.
func probeMmsgUDP(args []string) error {
	srv, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	to := &unix.SockaddrInet4{Port: srv.LocalAddr().(*net.UDPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Connect(fd, to); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if n, _, err := sendmmsg(fd, nil, "query-a", "query-aaaa"); err != nil || n != 2 {
		return fmt.Errorf("sendmmsg: %d sent, %v", n, err)
	}
	srv.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 16)
	for range 2 {
		if _, _, err := srv.ReadFrom(buf); err != nil {
			return err
		}
	}
	return nil
}

// probeStaleRefused binds a socket file, closes its socket and connects:
// nothing listens, so the answer must be ECONNREFUSED, as without a
// sandbox (programs that clean up stale sockets rely on it).
func probeStaleRefused(args []string) error {
	os.Remove(args[0])
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = unix.Bind(fd, &unix.SockaddrUnix{Name: args[0]})
	unix.Close(fd)
	if err != nil {
		return err
	}
	if err := probeDialType([]string{"stream", args[0]}); !errors.Is(err, unix.ECONNREFUSED) {
		return fmt.Errorf("connect to a stale socket: %v, want ECONNREFUSED", err)
	}
	return nil
}

// probeDialType connects a socket of a type (stream, seqpacket) to a path.
func probeDialType(args []string) error {
	typ := map[string]int{"stream": unix.SOCK_STREAM, "seqpacket": unix.SOCK_SEQPACKET}[args[0]]
	fd, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: args[1]})
}

// probeSendDgram sends one datagram to a path, unconnected (sendto) and
// connected (connect, then send).
func probeSendDgram(args []string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	errTo := unix.Sendto(fd, []byte("attack-sendto"), 0, &unix.SockaddrUnix{Name: args[0]})
	errMsg := unix.Sendmsg(fd, []byte("attack-sendmsg"), nil, &unix.SockaddrUnix{Name: args[0]}, 0)
	errConn := unix.Connect(fd, &unix.SockaddrUnix{Name: args[0]})
	if errTo == nil || errMsg == nil || errConn == nil {
		return nil
	}
	return fmt.Errorf("sendto: %v; sendmsg: %v; connect: %v", errTo, errMsg, errConn)
}

// probeDgramPair binds a datagram socket at a path and sends to it from
// another, by sendto, sendmsg and connect+write.
func probeDgramPair(args []string) error {
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(srv)
	os.Remove(args[0])
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: args[0]}); err != nil {
		return err
	}
	defer os.Remove(args[0])
	cli, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(cli)
	to := &unix.SockaddrUnix{Name: args[0]}
	if err := unix.Sendto(cli, []byte("one"), 0, to); err != nil {
		return fmt.Errorf("sendto: %w", err)
	}
	if err := unix.Sendmsg(cli, []byte("two"), nil, to, 0); err != nil {
		return fmt.Errorf("sendmsg: %w", err)
	}
	if err := unix.Connect(cli, to); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if _, err := unix.Write(cli, []byte("three")); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	buf := make([]byte, 16)
	for _, want := range []string{"one", "two", "three"} {
		n, _, err := unix.Recvfrom(srv, buf, 0)
		if err != nil || string(buf[:n]) != want {
			return fmt.Errorf("received %q, %v; want %q", buf[:n], err, want)
		}
	}
	return nil
}

func probeSeqpacketPair(args []string) error {
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(srv)
	os.Remove(args[0])
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: args[0]}); err != nil {
		return err
	}
	defer os.Remove(args[0])
	if err := unix.Listen(srv, 1); err != nil {
		return err
	}
	if err := probeDialType([]string{"seqpacket", args[0]}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

// probeWaitDial waits for a socket to appear (bound after the sandbox
// started), then dials it and reads.
func probeWaitDial(args []string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := os.Stat(args[0]); err == nil && st.Mode()&os.ModeSocket != 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the socket never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, err := net.DialTimeout("unix", args[0], 2*time.Second)
	if err != nil {
		return err
	}
	c.Close()
	return probeSendDgram([]string{args[1]})
}

// raceAddr is a sockaddr_un as machine words, so the flipping thread and
// the kernel (reading it through the call) share it without a Go data race.
type raceAddr [14]uint64

func sockaddrWords(path string) raceAddr {
	var b [112]byte
	*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_UNIX
	copy(b[2:], path)
	return *(*raceAddr)(unsafe.Pointer(&b))
}

// flip stores a or b into dst until stop, alternating.
func flip(dst *raceAddr, a, b raceAddr, stop *atomic.Bool) {
	for i := 0; !stop.Load(); i++ {
		src := &a
		if i%2 == 1 {
			src = &b
		}
		for w := range dst {
			atomic.StoreUint64(&dst[w], src[w])
		}
	}
}

// probeRaceConnect: one thread swaps the address between a socket inside
// (the probe's own server, which answers "I") and the host's (which
// answers "H") while another connects with it, over and over. Success (the
// attack) is reading "H" once.
func probeRaceConnect(args []string) error {
	host, inside := args[0], args[1]
	l, err := net.Listen("unix", inside)
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("I"))
			c.Close()
		}
	}()
	var addr raceAddr
	a, b := sockaddrWords(host), sockaddrWords(inside)
	addr = b
	var stop atomic.Bool
	go flip(&addr, a, b, &stop)
	defer stop.Store(true)
	var in, refused int
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&addr)), 2+uintptr(max(len(host), len(inside)))+1)
		if e != 0 {
			refused++
			unix.Close(fd)
			continue
		}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2})
		buf := make([]byte, 1)
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if n == 1 && buf[0] == 'H' {
			return nil
		}
		in++
	}
	return fmt.Errorf("inside=%d refused=%d", in, refused)
}

// probeRaceSendmsg: a datagram socket connected to the probe's own server;
// one thread swaps msghdr.msg_name between NULL (to the connected peer) and
// the host's datagram socket while another sends. The host counts what
// arrives: nothing may.
func probeRaceSendmsg(args []string) error {
	host, inside := args[0], args[1]
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(srv)
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: inside}); err != nil {
		return err
	}
	go func() { // drain
		buf := make([]byte, 64)
		for {
			if _, _, err := unix.Recvfrom(srv, buf, 0); err != nil {
				return
			}
		}
	}()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: inside}); err != nil {
		return fmt.Errorf("connect inside: %w", err)
	}
	hostAddr := sockaddrWords(host)
	payload := []byte("race-sendmsg")
	var iov unix.Iovec
	iov.Base = &payload[0]
	iov.SetLen(len(payload))
	// msghdr: name, namelen, iov, iovlen, control, controllen, flags.
	var msg [7]uint64
	msg[1] = uint64(2 + len(host) + 1)
	msg[2] = uint64(uintptr(unsafe.Pointer(&iov)))
	msg[3] = 1
	var stop atomic.Bool
	go func() {
		for i := 0; !stop.Load(); i++ {
			v := uint64(0)
			if i%2 == 1 {
				v = uint64(uintptr(unsafe.Pointer(&hostAddr)))
			}
			atomic.StoreUint64(&msg[0], v)
		}
	}()
	defer stop.Store(true)
	var ok, refused int
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		_, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), 0)
		if e != 0 {
			refused++
		} else {
			ok++
		}
	}
	return fmt.Errorf("inside=%d refused=%d", ok, refused)
}

// probePassFD passes a pipe's read end over a socketpair with SCM_RIGHTS
// (sendmsg, mediated) and reads through the received descriptor.
func probePassFD(args []string) error {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	unix.Write(p[1], []byte("passed"))
	if err := unix.Sendmsg(sp[0], []byte("x"), unix.UnixRights(p[0]), nil, 0); err != nil {
		return fmt.Errorf("sendmsg: %w", err)
	}
	unix.Close(p[0])
	buf, oob := make([]byte, 1), make([]byte, 64)
	_, oobn, _, _, err := unix.Recvmsg(sp[1], buf, oob, 0)
	if err != nil {
		return err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("control messages %v: %v", msgs, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return fmt.Errorf("rights %v: %v", fds, err)
	}
	got := make([]byte, 6)
	if n, err := unix.Read(fds[0], got); err != nil || string(got[:n]) != "passed" {
		return fmt.Errorf("read %q: %v", got, err)
	}
	return nil
}

// probeNonblockDial connects a nonblocking socket to its own server: the
// socket stays nonblocking and connected.
func probeNonblockDial(args []string) error {
	l, err := net.Listen("unix", args[0])
	if err != nil {
		return err
	}
	defer l.Close()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: args[0]}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_NONBLOCK == 0 {
		return fmt.Errorf("flags %#x after connect: %v", fl, err)
	}
	if _, err := unix.Read(fd, make([]byte, 1)); !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("read on a nonblocking connected socket: %v, want EAGAIN", err)
	}
	return nil
}

// probeRelativeRoundtrip binds and dials a socket by a relative name from a
// subdirectory: the supervisor resolves against the caller's cwd.
func probeRelativeRoundtrip(args []string) error {
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		return err
	}
	if err := os.Chdir(args[0]); err != nil {
		return err
	}
	l, err := net.Listen("unix", "rel.sock")
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := net.Dial("unix", "rel.sock")
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Read(make([]byte, 2))
	return err
}

// hostServers listens outside the sandbox: a stream server that answers "H"
// and a datagram socket that counts what arrives, at base+".sock" and
// base+".dgram".
type hostServers struct {
	stream, dgram string
	mu            sync.Mutex
	got           []string
}

func startHostServers(t *testing.T, base string) *hostServers {
	t.Helper()
	h := &hostServers{stream: base + ".sock", dgram: base + ".dgram"}
	l, err := net.Listen("unix", h.stream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("H"))
			c.Close()
		}
	}()
	d, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: h.dgram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	go func() {
		buf := make([]byte, 256)
		for {
			n, _, err := d.ReadFrom(buf)
			if err != nil {
				return
			}
			h.mu.Lock()
			h.got = append(h.got, string(buf[:n]))
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *hostServers) received() []string {
	time.Sleep(50 * time.Millisecond) // let a datagram in flight land
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// mediationRun runs the probe (or a shell script when args[0] is "sh") in
// a workspace-write sandbox with /tmp writable, as a session does.
func mediationRun(t *testing.T, ws string, network bool, args ...string) Result {
	t.Helper()
	argv := append([]string{os.Args[0]}, args...)
	if args[0] == "sh" {
		argv = []string{"/bin/sh", "-c", args[1]}
	}
	mode := NetworkOff
	if network {
		mode = NetworkOn
	}
	res, err := Run(context.Background(), Command{
		Argv: argv, Cwd: ws, Helper: testHelper,
		Policy:  Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, Network: mode},
		Env:     EnvPolicy{Set: map[string]string{probeEnv: "1", "PROBE": os.Args[0], "WS": ws}},
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut {
		t.Fatalf("%q timed out:\n%s", args, res.Output)
	}
	return res
}

// hostSocketPlaces are where a host process binds sockets the known-places
// scan never looked: deep in /tmp, /var/tmp, the workspace.
func hostSocketPlaces(t *testing.T, ws string) map[string]string {
	t.Helper()
	deep := filepath.Join(t.TempDir(), "a", "b", "c", "d") // /tmp/X/a/b/c/d: five levels
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	places := map[string]string{"deep in /tmp": filepath.Join(deep, "host"), "workspace": filepath.Join(ws, "host")}
	if d, err := os.MkdirTemp("/var/tmp", "warden-med-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		places["/var/tmp"] = filepath.Join(d, "host")
	} else {
		t.Logf("/var/tmp is not writable here (%v): using the home directory instead", err)
		d := filepath.Join(t.TempDir(), "home", ".cache", "svc")
		os.MkdirAll(d, 0o755)
		places["a home directory"] = filepath.Join(d, "host")
	}
	return places
}

// TestMediationRefusesHostSockets: every host socket is refused (stream
// and seqpacket connect, datagram sendto/sendmsg/connect), with the network
// off and on, and each place's twin, the sandbox's own socket there, works.
func TestMediationRefusesHostSockets(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	for place, base := range hostSocketPlaces(t, ws) {
		h := startHostServers(t, base)
		for _, network := range []bool{false, true} {
			name := fmt.Sprintf("%s/network=%v", place, network)
			t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				res := mediationRun(t, ws, network, "dial-unix", h.stream)
				if res.ExitCode == 0 {
					t.Errorf("connected to the host's %s:\n%s", h.stream, res.Output)
				} else if !strings.Contains(string(res.Output), "permission denied") {
					t.Errorf("refused, but not with EACCES:\n%s", res.Output)
				}
				if res := mediationRun(t, ws, network, "dial-unix-type", "seqpacket", h.stream); res.ExitCode == 0 {
					t.Errorf("seqpacket connect to the host's %s worked:\n%s", h.stream, res.Output)
				}
				if res := mediationRun(t, ws, network, "send-dgram", h.dgram); res.ExitCode == 0 {
					t.Errorf("a datagram reached the host's %s:\n%s", h.dgram, res.Output)
				}
				if res := mediationRun(t, ws, network, "mmsg-send", h.dgram); res.ExitCode == 0 {
					t.Errorf("sendmmsg reached the host's %s:\n%s", h.dgram, res.Output)
				}
				if got := h.received(); len(got) > 0 {
					t.Errorf("the host's datagram socket received %q", got)
				}
				// The host's socket answers outside: the refusal is the sandbox's.
				if c, err := net.Dial("unix", h.stream); err != nil {
					t.Errorf("outside the sandbox %s does not answer either, so this proves nothing: %v", h.stream, err)
				} else {
					c.Close()
				}
				// Twins: the sandbox's own sockets in the same directory
				// (/var/tmp is not a writable root: there, the workspace).
				dir := filepath.Dir(base)
				if strings.HasPrefix(dir, "/var/tmp/") {
					dir = ws
				}
				if res := mediationRun(t, ws, network, "unix-roundtrip", filepath.Join(dir, "in.sock")); res.ExitCode != 0 {
					t.Errorf("a server and client inside, in %s, failed:\n%s", dir, res.Output)
				}
				if res := mediationRun(t, ws, network, "dgram-pair", filepath.Join(dir, "in.dgram")); res.ExitCode != 0 {
					t.Errorf("a datagram pair inside, in %s, failed:\n%s", dir, res.Output)
				}
			})
		}
	}
}

// TestMediationRefusesSocketBoundAfterStart: a host socket bound while the
// command already runs (no scan before the run could have seen it).
func TestMediationRefusesSocketBoundAfterStart(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	base := filepath.Join(t.TempDir(), "late", "x", "y", "host")
	os.MkdirAll(filepath.Dir(base), 0o755)
	done := make(chan Result, 1)
	go func() { done <- mediationRun(t, ws, false, "wait-dial", base+".sock", base+".dgram") }()
	time.Sleep(300 * time.Millisecond)
	h := startHostServers(t, base)
	res := <-done
	if res.ExitCode == 0 {
		t.Errorf("reached a host socket bound after the sandbox started:\n%s", res.Output)
	}
	if !strings.Contains(string(res.Output), "permission denied") {
		t.Errorf("want the connect refused with EACCES:\n%s", res.Output)
	}
	if got := h.received(); len(got) > 0 {
		t.Errorf("the host's datagram socket received %q", got)
	}
	// Twin: the sandbox's own socket bound after it started.
	if res := mediationRun(t, ws, false, "sh", `"$PROBE" unix-roundtrip "$WS/late.sock" & sleep 0.2; wait $!`); res.ExitCode != 0 {
		t.Errorf("a socket bound during the run failed:\n%s", res.Output)
	}
}

var raceCounts = regexp.MustCompile(`inside=(\d+) refused=(\d+)`)

// TestMediationAddressSwapRace: a thread rewrites the address (connect) or
// msg_name (sendmsg) while another calls; the supervisor uses its own copy,
// so the host is never reached. The counts prove both addresses were used.
func TestMediationAddressSwapRace(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	dir := t.TempDir()
	h := startHostServers(t, filepath.Join(dir, "h"))
	// Paths of one length, so the swap changes only the name.
	inside := filepath.Join(dir, "i.sock")
	for op, host := range map[string]string{"race-connect": h.stream, "race-sendmsg": h.dgram} {
		t.Run(op, func(t *testing.T) {
			in := strings.TrimSuffix(inside, ".sock") + "-" + op[5:] + ".sk"
			res := mediationRun(t, ws, false, op, host, in)
			if res.ExitCode == 0 {
				t.Fatalf("the swap reached the host:\n%s", res.Output)
			}
			m := raceCounts.FindStringSubmatch(string(res.Output))
			if m == nil {
				t.Fatalf("no counts in the output:\n%s", res.Output)
			}
			ok, _ := strconv.Atoi(m[1])
			refused, _ := strconv.Atoi(m[2])
			if ok == 0 || refused == 0 {
				t.Errorf("the race did not exercise both addresses (inside %d, refused %d)", ok, refused)
			}
			t.Logf("%s: %d calls reached the inside socket, %d were refused", op, ok, refused)
			os.Remove(in)
		})
	}
	if got := h.received(); len(got) > 0 {
		t.Errorf("the host's datagram socket received %d datagrams", len(got))
	}
}

// TestMediationKeepsSandboxSockets: what programs do among themselves.
func TestMediationKeepsSandboxSockets(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	tmp := t.TempDir()
	cases := map[string][]string{
		"server and client in the workspace":  {"unix-roundtrip", filepath.Join(ws, "srv.sock")},
		"server and client in /tmp":           {"unix-roundtrip", filepath.Join(tmp, "srv.sock")},
		"relative path from a subdirectory":   {"relative-roundtrip", filepath.Join(ws, "sub")},
		"datagram pair":                       {"dgram-pair", filepath.Join(ws, "d.sock")},
		"seqpacket pair":                      {"seqpacket-pair", filepath.Join(ws, "sp.sock")},
		"socketpair":                          {"socketpair"},
		"descriptor passing (SCM_RIGHTS)":     {"pass-fd"},
		"nonblocking connect":                 {"nonblock-dial", filepath.Join(ws, "nb.sock")},
		"abstract socket":                     {"unix-roundtrip", "@warden-med-" + nonce()},
		"a stale socket file is ECONNREFUSED": {"stale-refused", filepath.Join(ws, "stale.sock")},
		"sendmmsg of two datagrams":           {"mmsg-pair", filepath.Join(ws, "mm.sock")},
		"singleton socket through a symlink":  {"symlink-roundtrip", filepath.Join(tmp, "singleton")},
		"connect and sendto from a thread":    {"thread-roundtrip", filepath.Join(ws, "thr.sock")},
	}
	if _, err := exec.LookPath("python3"); err == nil {
		cases["python multiprocessing manager, pool and forkserver"] = []string{"sh", `python3 -c '
import multiprocessing as mp
from multiprocessing.managers import SyncManager
if __name__ == "__main__":
    m = SyncManager(); m.start(); d = m.dict(); d["k"] = 1; assert dict(d) == {"k": 1}; m.shutdown()
    with mp.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
    ctx = mp.get_context("forkserver"); q = ctx.Queue(); pr = ctx.Process(target=q.put, args=(5,)); pr.start(); assert q.get() == 5; pr.join()
    print("multiprocessing ok")
'`}
	}
	t.Run("sendmmsg on connected UDP (glibc's resolver)/network=true", func(t *testing.T) {
		if res := mediationRun(t, ws, true, "mmsg-udp"); res.ExitCode != 0 {
			t.Errorf("failed (exit %d):\n%s", res.ExitCode, res.Output)
		}
	})
	for name, args := range cases {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network=%v", strings.ReplaceAll(name, " ", "_"), network), func(t *testing.T) {
				if res := mediationRun(t, ws, network, args...); res.ExitCode != 0 {
					t.Errorf("failed (exit %d):\n%s", res.ExitCode, res.Output)
				}
			})
		}
	}
}

// BenchmarkSandboxStartupSockets compares, interleaved in one run, the
// sandboxed start of /bin/true with unix-socket mediation (no socket scan)
// against the scan-and-mask fallback it replaces, warm (a spare helper
// ready) and cold, with bubblewrap as the baseline:
//
//	go test -run '^$' -bench SandboxStartupSockets -benchtime 200x ./sandbox/
func BenchmarkSandboxStartupSockets(b *testing.B) {
	if !linux.SocketMediation() {
		b.Skip("no mediation on this kernel")
	}
	ws := b.TempDir()
	cmd := Command{Argv: []string{"/bin/true"}, Cwd: ws, Policy: Policy{Mode: WorkspaceWrite, Workspace: []string{ws}}, Helper: testHelper}
	run := func(mediate, cold bool) time.Duration {
		linux.MediationOffForTest = !mediate
		coldStartForTest = cold
		defer func() { linux.MediationOffForTest, coldStartForTest = false, false }()
		spares.settle()
		start := time.Now()
		res, err := Run(context.Background(), cmd)
		d := time.Since(start)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("sandboxed /bin/true: %v %+v", err, res)
		}
		return d
	}
	bwrap, bwrapErr := exec.LookPath("bwrap")
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	run(true, false)
	run(false, false)
	var med, scan, medCold, scanCold, bw []time.Duration
	b.ResetTimer()
	for range b.N {
		med = append(med, run(true, false))
		scan = append(scan, run(false, false))
		medCold = append(medCold, run(true, true))
		scanCold = append(scanCold, run(false, true))
		if bwrapErr == nil {
			start := time.Now()
			if err := exec.Command(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			bw = append(bw, time.Since(start))
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(median(med)), "mediated-warm-ms")
	b.ReportMetric(ms(median(scan)), "scan-warm-ms")
	b.ReportMetric(ms(median(medCold)), "mediated-cold-ms")
	b.ReportMetric(ms(median(scanCold)), "scan-cold-ms")
	if len(bw) > 0 {
		b.ReportMetric(ms(median(bw)), "bwrap-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// TestMediationCredentialsPid: SCM_CREDENTIALS claiming another process's
// pid is refused (the supervisor, which sends, could name any); the
// command's own pid goes through.
func TestMediationCredentialsPid(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	if res := mediationRun(t, ws, false, "send-creds", "other"); res.ExitCode == 0 {
		t.Errorf("credentials naming another pid were sent:\n%s", res.Output)
	}
	if res := mediationRun(t, ws, false, "send-creds", "self"); res.ExitCode != 0 {
		t.Errorf("credentials naming the sender failed:\n%s", res.Output)
	}
}

// probeSendCreds sends SCM_CREDENTIALS over a socketpair, naming itself or
// its parent (another process in the sandbox).
func probeSendCreds(args []string) error {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.SetsockoptInt(sp[1], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		return err
	}
	pid := os.Getpid()
	if args[0] == "other" {
		pid = os.Getppid()
	}
	cred := unix.UnixCredentials(&unix.Ucred{Pid: int32(pid), Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())})
	if err := unix.Sendmsg(sp[0], []byte("c"), cred, nil, 0); err != nil {
		return err
	}
	oob := make([]byte, 64)
	_, oobn, _, _, err := unix.Recvmsg(sp[1], make([]byte, 1), oob, 0)
	if err != nil {
		return err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("control messages %v: %v", msgs, err)
	}
	got, err := unix.ParseUnixCredentials(&msgs[0])
	if err != nil || int(got.Pid) != pid {
		return fmt.Errorf("received credentials %+v, %v; sent pid %d", got, err, pid)
	}
	return nil
}

// probeSymlinkRoundtrip: a server binds in a directory of its own and a
// client connects through a symbolic link to it, as Chromium's singleton
// socket is found (SingletonSocket -> /tmp/.org.chromium.../SingletonSocket).
func probeSymlinkRoundtrip(args []string) error {
	real := filepath.Join(args[0], "real")
	if err := os.MkdirAll(real, 0o700); err != nil {
		return err
	}
	sock := filepath.Join(real, "SingletonSocket")
	link := filepath.Join(args[0], "SingletonSocket")
	os.Remove(sock)
	os.Remove(link)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	defer l.Close()
	if err := os.Symlink(sock, link); err != nil {
		return err
	}
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	c, err := net.Dial("unix", link)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Read(make([]byte, 2))
	return err
}

// TestMediationSymlinkToHostSocket: a link the command makes in the
// workspace to a host socket leads nowhere (the check is on the inode the
// path resolves to); a link to its own socket works.
func TestMediationSymlinkToHostSocket(t *testing.T) {
	needMediation(t)
	ws := t.TempDir()
	deep := filepath.Join(t.TempDir(), "deep", "er")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	h := startHostServers(t, filepath.Join(deep, "host"))
	script := fmt.Sprintf(`ln -s %q "$WS/link.sock" && "$PROBE" dial-unix "$WS/link.sock"`, h.stream)
	if res := mediationRun(t, ws, false, "sh", script); res.ExitCode == 0 {
		t.Errorf("connected to the host's socket through a link:\n%s", res.Output)
	}
	if res := mediationRun(t, ws, false, "symlink-roundtrip", filepath.Join(ws, "own")); res.ExitCode != 0 {
		t.Errorf("a link to the sandbox's own socket failed:\n%s", res.Output)
	}
}

// probeThreadRoundtrip connects and sends a datagram from a thread that is
// not the thread group's leader (most programs' sockets are used so).
func probeThreadRoundtrip(args []string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == os.Getpid() {
			errc <- errors.New("the goroutine runs on the main thread")
			return
		}
		if err := probeNonblockDial([]string{args[0]}); err != nil {
			errc <- fmt.Errorf("connect: %w", err)
			return
		}
		errc <- probeDgramPair([]string{args[0] + ".dgram"})
	}()
	return <-errc
}
