package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"

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

// forwardPort is where the forwarder listens inside the sandbox's network
// namespace: a fresh namespace has every port free, so it is fixed and the
// command's proxy variables are known before the helper starts.
const forwardPort = 3128

// forwardFD is the helper's end of the forwarding socketpair
// (ExtraFiles[2]).
const forwardFD = 5

// forwardPair makes the forwarding socketpair: the launcher's end and the
// helper's. SOCK_SEQPACKET keeps one descriptor per message.
func forwardPair() (launcher, helper *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("network forwarder socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "forward"), os.NewFile(uintptr(fds[1]), "forward"), nil
}

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
		return fmt.Errorf("listen on 127.0.0.1:%d in the sandbox: %w", forwardPort, err)
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
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: forwardPort, Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: forwardPort, Addr: [16]byte{15: 1}}
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

// receiveForwarded is the launcher's part: it reads connections from the
// helper on ctl until the helper is gone, and hands each to pr. It owns ctl.
func receiveForwarded(ctl *os.File, pr *proxyRun) error {
	fc, err := net.FileConn(ctl)
	ctl.Close()
	if err != nil {
		return fmt.Errorf("network forwarder socket: %w", err)
	}
	uc, ok := fc.(*net.UnixConn)
	if !ok {
		fc.Close()
		return fmt.Errorf("network forwarder socket is a %T", fc)
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		uc.Close()
		return fmt.Errorf("network forwarder socket: %w", err)
	}
	pr.onStop(func() { uc.Close() })
	go func() {
		defer uc.Close()
		buf := make([]byte, 1)
		oob := make([]byte, unix.CmsgSpace(4*4))
		for {
			var n, oobn int
			var rerr error
			err := rc.Read(func(fd uintptr) bool {
				// MSG_CMSG_CLOEXEC: a command another run forks meanwhile
				// must not inherit the connection.
				n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
				return !errors.Is(rerr, unix.EAGAIN)
			})
			if err != nil || rerr != nil || (n == 0 && oobn == 0) {
				return
			}
			for _, fd := range parseRights(oob[:oobn]) {
				f := os.NewFile(uintptr(fd), "proxied")
				c, err := net.FileConn(f)
				f.Close()
				if err != nil {
					continue
				}
				pr.serve(c)
			}
		}
	}()
	return nil
}

// parseRights returns the descriptors an SCM_RIGHTS message carried.
func parseRights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		out = append(out, fds...)
	}
	return out
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
func landlockForwarder(ruleset int, spec *helperSpec, handledNet uint64) error {
	if spec.Network != NetworkAsk || handledNet&ll.AccessNetConnectTCP == 0 {
		return nil
	}
	rule := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: forwardPort}
	if err := ll.LandlockAddNetPortRule(ruleset, &rule, 0); err != nil {
		return fmt.Errorf("allow the forwarder's port: %w", err)
	}
	return nil
}

// askNetwork readies a run under NetworkAsk: the proxy variables, and the
// proxyRun that serves what the forwarder passes on. Without a network
// namespace the run is refused, never given the host's network (launch
// turns ask into off before it gets here).
func (p *Process) askNetwork(c Command, spec helperSpec, env []string) ([]string, error) {
	if spec.Network != NetworkAsk {
		return env, nil
	}
	if !spec.Layers.Namespaces {
		return nil, refuse(`network_access "ask" needs a network namespace, which this system refuses`)
	}
	p.proxy = newProxyRun(p.ctx, c.Proxy)
	return proxyEnv(env, forwardPort), nil
}

// askFallsBackToOff turns a run under NetworkAsk into one with no network,
// where the kernel refuses the network namespace that would keep the
// command to Warden's proxy: the strictest network that can be enforced
// here, never the host's. env is the run's environment without the proxy
// variables; the proxy, if started, is stopped.
func (p *Process) askFallsBackToOff(spec *helperSpec, env []string) []string {
	spec.Network, p.network, p.askFellBack = NetworkOff, NetworkOff, true
	if p.proxy != nil {
		p.proxy.stop()
		p.proxy = nil
	}
	return setEnv(env, EnvNetworkDisabled, "1")
}

// linuxAskEnforcement says how NetworkAsk is enforced here, for doctor.
func linuxAskEnforcement() []string {
	out := []string{
		"its own network namespace with only loopback up: no route out, no resolver (direct connections and DNS fail)",
		fmt.Sprintf("the sandbox's helper listens on 127.0.0.1:%d and [::1]:%d inside and passes each connection to Warden's proxy over a socketpair the command never holds", forwardPort, forwardPort),
		"seccomp: only AF_UNIX and TCP sockets (no UDP, raw, packet, netlink or MPTCP)",
	}
	if effectiveLandlockABI() >= 4 {
		out = append(out, fmt.Sprintf("Landlock: TCP connect to port %d only, no bind", forwardPort))
	}
	if socketMediation() {
		// The supervisor performs the command's connects (unix-socket
		// mediation), so it applies the same port rule itself.
		out = append(out, fmt.Sprintf("the socket supervisor, which performs every connect for the command, refuses a TCP port other than %d", forwardPort))
	}
	return out
}
