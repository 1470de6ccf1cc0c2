package netproxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/proxy"
)

func socksHTTPClient(t *testing.T, proxyAddr string) *http.Client {
	t.Helper()
	d, err := proxy.SOCKS5("tcp", proxyAddr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{
		DialContext:       d.(proxy.ContextDialer).DialContext,
		DisableKeepAlives: true,
	}}
}

func TestSOCKS5ConnectByName(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	resp, err := socksHTTPClient(t, e.addr).Get(fmt.Sprintf("http://registry.test:%d/x", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "hello registry.test") {
		t.Fatalf("body %q", body)
	}
	want := Destination{Host: "registry.test", Port: port, Protocol: SOCKS5}
	if r := e.dec.requests(); len(r) != 1 || r[0].Dest != want {
		t.Fatalf("decided %+v, want %v (decided on the name)", r, want)
	}
	if rec := e.rec.wait(t, 1)[0]; rec.Dest != want || rec.BytesUp == 0 || rec.BytesDown == 0 {
		t.Fatalf("record %+v", rec)
	}

	// Twin: a refused name gets reply 0x02, no lookup, no dial.
	_, err = socksHTTPClient(t, e.addr).Get(fmt.Sprintf("http://a.test:%d/x", port))
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("refused SOCKS name: %v", err)
	}
	if l := e.resolver.lookups(); len(l) != 1 || l[0] != "registry.test" {
		t.Fatalf("lookups %v: the refused name must not be resolved", l)
	}
	if d := e.dialer.dials(); len(d) != 1 {
		t.Fatalf("dials %v", d)
	}
}

func TestSOCKS5IPLiterals(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("127.0.0.1"), false)
	resp, err := socksHTTPClient(t, e.addr).Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatalf("approved IP literal 127.0.0.1 must be reachable: %v", err)
	}
	resp.Body.Close()
	if l := e.resolver.lookups(); len(l) != 0 {
		t.Fatalf("an IP literal was resolved: %v", l)
	}
	// IPv6 literal: decided as written; refused here (not approved).
	_, err = socksHTTPClient(t, e.addr).Get(fmt.Sprintf("http://[::1]:%d/", port))
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("unapproved ::1: %v", err)
	}
	var hosts []string
	for _, r := range e.dec.requests() {
		hosts = append(hosts, r.Dest.Host)
	}
	if strings.Join(hosts, ",") != "127.0.0.1,::1" {
		t.Fatalf("decided %v", hosts)
	}
}

// socksRaw performs the no-auth greeting and sends a raw request.
func socksRaw(t *testing.T, addr string, req []byte) []byte {
	t.Helper()
	c, _ := rawRequest(t, addr, "\x05\x01\x00")
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("method reply %v %v", m, err)
	}
	c.Write(req)
	rep := make([]byte, 10)
	if _, err := io.ReadFull(c, rep); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return rep
}

func TestSOCKS5UnsupportedCommandsAndAddresses(t *testing.T) {
	e := startProxy(t, allowHosts("registry.test", "127.0.0.1"), true)
	for _, tc := range []struct {
		name string
		req  []byte
		code byte
	}{
		{"bind", []byte{5, 2, 0, 1, 127, 0, 0, 1, 0, 80}, socksCmdNotSupported},
		{"udp associate", []byte{5, 3, 0, 1, 127, 0, 0, 1, 0, 80}, socksCmdNotSupported},
		{"address type 9", []byte{5, 1, 0, 9, 127, 0, 0, 1, 0, 80}, socksATypNotSupported},
		{"wrong version in request", []byte{4, 1, 0, 1, 127, 0, 0, 1, 0, 80}, socksGeneralFailure},
		{"port 0", []byte{5, 1, 0, 1, 127, 0, 0, 1, 0, 0}, socksNotAllowed},
		{"name with a space", append([]byte{5, 1, 0, 3, 9}, "a b.test\x00\x00\x50"...), socksNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rep := socksRaw(t, e.addr, tc.req); rep[0] != 5 || rep[1] != tc.code {
				t.Fatalf("reply %v, want code %#x", rep, tc.code)
			}
		})
	}
	if r := e.dec.requests(); len(r) != 0 {
		t.Fatalf("malformed requests reached the decider: %+v", r)
	}
	if d := e.dialer.dials(); len(d) != 0 {
		t.Fatalf("dialled %v", d)
	}
	// Twin: a well-formed CONNECT to an approved literal succeeds.
	echo, stop := echoServer(t)
	defer stop()
	_, p, _ := net.SplitHostPort(echo)
	pn, _ := strconv.Atoi(p)
	if rep := socksRaw(t, e.addr, []byte{5, 1, 0, 1, 127, 0, 0, 1, byte(pn >> 8), byte(pn)}); rep[1] != socksSucceeded {
		t.Fatalf("reply %v", rep)
	}
}

func TestSOCKSGreetingErrors(t *testing.T) {
	e := startProxy(t, allowHosts(), true)
	// Only username/password offered: no acceptable method.
	c, _ := rawRequest(t, e.addr, "\x05\x01\x02")
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0xff} {
		t.Fatalf("method reply %v %v", m, err)
	}
	// SOCKS4: rejected in SOCKS4's own format.
	c, _ = rawRequest(t, e.addr, "\x04\x01\x00\x50\x7f\x00\x00\x01\x00")
	var r4 [8]byte
	if _, err := io.ReadFull(c, r4[:]); err != nil || r4[1] != 0x5b {
		t.Fatalf("socks4 reply %v %v", r4, err)
	}
}

func TestSOCKSDialFailureRepliesError(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	e := startProxy(t, allowHosts("127.0.0.1"), false)
	if rep := socksRaw(t, e.addr, []byte{5, 1, 0, 1, 127, 0, 0, 1, byte(port >> 8), byte(port)}); rep[1] != socksConnRefused {
		t.Fatalf("reply %v, want connection refused", rep)
	}
	if rec := e.rec.wait(t, 1)[0]; !rec.Verdict.Allow || rec.Err == "" {
		t.Fatalf("record %+v: want the dial error", rec)
	}
}

func TestSOCKS5IPv6Address(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			io.WriteString(c, "v6")
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	e := startProxy(t, allowHosts("::1"), false)
	req := append([]byte{5, 1, 0, 4}, net.IPv6loopback...)
	if rep := socksRaw(t, e.addr, append(req, byte(port>>8), byte(port))); rep[1] != socksSucceeded {
		t.Fatalf("approved ::1: reply %v", rep)
	}
	// Twin: an IPv4-mapped form of 127.0.0.1 is its own literal, not approved here.
	mapped := append([]byte{5, 1, 0, 4}, net.ParseIP("::ffff:127.0.0.1").To16()...)
	if rep := socksRaw(t, e.addr, append(mapped, byte(port>>8), byte(port))); rep[1] != socksNotAllowed {
		t.Fatalf("unapproved ::ffff:127.0.0.1: reply %v", rep)
	}
	if r := e.dec.requests(); len(r) != 2 || r[0].Dest.Host != "::1" || r[1].Dest.Host != "::ffff:127.0.0.1" {
		t.Fatalf("decided %+v", r)
	}
}
