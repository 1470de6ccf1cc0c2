package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/wardenhq/warden/internal/envlist"
	"github.com/wardenhq/warden/sandbox/linux"
	"golang.org/x/sys/unix"
)

// The launcher's side of forwarding under NetworkAsk (forwarder_linux.go
// is the helper's): it receives each connection the helper accepted and
// hands it to the run's ProxyHandler.

// forwardPair makes the forwarding socketpair: the launcher's end and the
// helper's. SOCK_SEQPACKET keeps one descriptor per message.
func forwardPair() (launcher, helper *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("network forwarder socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "forward"), os.NewFile(uintptr(fds[1]), "forward"), nil
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

// askNetwork readies a run under NetworkAsk: the proxy variables, and the
// proxyRun that serves what the forwarder passes on. Without a network
// namespace the run is refused, never given the host's network (launch
// turns ask into off before it gets here).
func (p *Process) askNetwork(c Command, spec linux.Spec, env []string) ([]string, error) {
	if spec.Network != linux.NetworkAsk {
		return env, nil
	}
	if !spec.Layers.Namespaces {
		return nil, refuse(`network_access "ask" needs a network namespace, which this system refuses`)
	}
	p.proxy = newProxyRun(p.ctx, c.Proxy)
	return proxyEnv(env, linux.ForwardPort), nil
}

// askFallsBackToOff turns a run under NetworkAsk into one with no network,
// where the kernel refuses the network namespace that would keep the
// command to Warden's proxy: the strictest network that can be enforced
// here, never the host's. env is the run's environment without the proxy
// variables; the proxy, if started, is stopped.
func (p *Process) askFallsBackToOff(spec *linux.Spec, env []string) []string {
	spec.Network, p.network, p.askFellBack = linux.NetworkOff, NetworkOff, true
	if p.proxy != nil {
		p.proxy.stop()
		p.proxy = nil
	}
	return envlist.Set(env, EnvNetworkDisabled, "1")
}

// linuxAskEnforcement says how NetworkAsk is enforced here, for doctor.
func linuxAskEnforcement() []string {
	out := []string{
		"its own network namespace with only loopback up: no route out, no resolver (direct connections and DNS fail)",
		fmt.Sprintf("the sandbox's helper listens on 127.0.0.1:%d and [::1]:%d inside and passes each connection to Warden's proxy over a socketpair the command never holds", linux.ForwardPort, linux.ForwardPort),
		"seccomp: only AF_UNIX and TCP sockets (no UDP, raw, packet, netlink or MPTCP)",
	}
	if linux.EffectiveLandlockABI() >= 4 {
		out = append(out, fmt.Sprintf("Landlock: TCP connect to port %d only, no bind", linux.ForwardPort))
	}
	if linux.SocketMediation() {
		// The supervisor performs the command's connects (unix-socket
		// mediation), so it applies the same port rule itself.
		out = append(out, fmt.Sprintf("the socket supervisor, which performs every connect for the command, refuses a TCP port other than %d", linux.ForwardPort))
	}
	return out
}
