package linux

import (
	"errors"
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Under NetworkAsk the command has its own network namespace with only a
// loopback interface. The helper (pid 1 there) listens on forwardPort of
// that loopback and passes every accepted connection, as a descriptor over
// a socketpair it inherited (SCM_RIGHTS), to the launcher, which hands it
// to the run's ProxyHandler. No path in any filesystem, no other process.
// The command never holds the socketpair: the helper keeps it close-on-exec
// and starts the command with stdio only, so it cannot pass descriptors of
// its own to the launcher; all it can do is connect to the forwarder, which
// is the proxy.

// ForwardPort is where the forwarder listens inside the sandbox's network
// namespace: a fresh namespace has every port free, so it is fixed and the
// command's proxy variables are known before the helper starts.
const ForwardPort = 3128

// forwardFD is the helper's end of the forwarding socketpair
// (ExtraFiles[2]).
const forwardFD = 5

// startForwarder is the helper's part, run before the command exists: it
// brings the loopback interface up and listens on 127.0.0.1 (and ::1 when
// the kernel has IPv6) at forwardPort. Every failure is fatal: a run that
// was to ask per host must not start without its only way out.
func startForwarder() error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bring up the sandbox's loopback interface: %w", err)
	}
	v4, err := listenLoopback(unix.AF_INET)
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d in the sandbox: %w", ForwardPort, err)
	}
	go forwardLoop(v4)
	if v6, err := listenLoopback(unix.AF_INET6); err == nil {
		go forwardLoop(v6)
	}
	return nil
}

// loopbackUp sets IFF_UP on lo, which gives it 127.0.0.1 and ::1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func listenLoopback(family int) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: ForwardPort, Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: ForwardPort, Addr: [16]byte{15: 1}}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// forwardLoop accepts on ln and sends each connection to the launcher. A
// connection the launcher cannot take is closed: refused, not let through.
func forwardLoop(ln int) {
	for {
		c, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) || errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
				continue
			}
			return
		}
		for {
			err = unix.Sendmsg(forwardFD, []byte{0}, unix.UnixRights(c), nil, unix.MSG_NOSIGNAL)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		unix.Close(c)
	}
}

// offArg2 is the third system-call argument in seccomp_data (low 32 bits).
const offArg2 = 32

// askSockets is the seccomp rule for socket() under NetworkAsk, with the
// family loaded: AF_UNIX, and TCP over IPv4 and IPv6 (to reach the
// forwarder, the only listener the command can reach). No UDP (so no DNS
// of its own: names are resolved by the proxy), raw, packet, netlink or
// MPTCP sockets, which Landlock's TCP rules would not cover.
func askSockets(a *asm) {
	a.jeq(unix.AF_UNIX, "allow", "")
	a.jeq(unix.AF_INET, "ask-inet", "")
	a.jeq(unix.AF_INET6, "ask-inet", "eperm")
	a.label("ask-inet")
	a.add(bpf.LoadAbsolute{Off: offArg1, Size: 4})
	a.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf}) // the type without SOCK_NONBLOCK and SOCK_CLOEXEC
	a.jeq(unix.SOCK_STREAM, "", "eperm")
	a.add(bpf.LoadAbsolute{Off: offArg2, Size: 4})
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "eperm")
}

// landlockForwarder lets the command connect to the forwarder's port and
// nothing else over TCP (no bind) when Landlock handles TCP (ABI 4).
func landlockForwarder(ruleset int, spec *Spec, handledNet uint64) error {
	if spec.Network != NetworkAsk || handledNet&ll.AccessNetConnectTCP == 0 {
		return nil
	}
	rule := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: ForwardPort}
	if err := ll.LandlockAddNetPortRule(ruleset, &rule, 0); err != nil {
		return fmt.Errorf("allow the forwarder's port: %w", err)
	}
	return nil
}
