package sandbox

import "net"

// askNetwork readies a run under NetworkAsk on macOS: a listener on a free
// port of the host's loopback, served by the run's ProxyHandler, the proxy
// variables pointing at it, and its port for the Seatbelt profile, which
// lets the command connect there and nowhere else.
func (p *Process) askNetwork(c Command, env []string) (int, []string, error) {
	if c.Policy.network() != NetworkAsk {
		return 0, env, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, refuse("network_access \"ask\": listen for the proxy on 127.0.0.1: %v", err)
	}
	p.proxy = newProxyRun(p.ctx, c.Proxy)
	p.proxy.onStop(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p.proxy.serve(conn)
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	return port, proxyEnv(env, port), nil
}
