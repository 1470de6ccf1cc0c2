package netproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRebindingRefused: an approved name that resolves to a loopback or
// private address is refused (403 / SOCKS 0x02) and never dialled.
func TestRebindingRefused(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test", "a.test", "localhost", "127.0.0.1"), false)
	// a.test answers a public and a private address: one private answer is enough to refuse.
	e.resolver.StaticResolver["a.test"] = []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.5")}
	for _, host := range []string{"registry.test", "a.test"} {
		resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://%s:%d/", host, port))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Proxy-Error") != proxyErrPrivate ||
			!strings.Contains(string(body), ReasonPrivate) {
			t.Fatalf("%s: status %d %q body %q", host, resp.StatusCode, resp.Header.Get("X-Proxy-Error"), body)
		}
	}
	// The same through SOCKS and CONNECT.
	_, err := socksHTTPClient(t, e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("SOCKS rebinding: %v", err)
	}
	_, br := rawRequest(t, e.addr, fmt.Sprintf("CONNECT registry.test:%d HTTP/1.1\r\n\r\n", port))
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("CONNECT rebinding: %+v %v", resp, err)
	}
	if d := e.dialer.dials(); len(d) != 0 {
		t.Fatalf("a name resolving to a private address was dialled: %v", d)
	}
	refs := e.srv.Refusals(testOrigin.RunID)
	if len(refs) == 0 || refs[0].Reason != ReasonPrivate {
		t.Fatalf("refusals %+v", refs)
	}
	// The record of a refusal is written after the answer: registry.test's
	// may come after a.test's.
	var rec *Record
	for _, r := range e.rec.wait(t, 2) {
		if strings.Contains(r.Dest.Host, "registry.test") {
			rec = &r
			break
		}
	}
	if rec == nil || rec.Verdict.Allow || !strings.Contains(rec.Err, "resolved to 127.0.0.1") {
		t.Fatalf("record of registry.test %+v", rec)
	}

	// Twins: approved as the literal 127.0.0.1, or as localhost, it is reachable.
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://%s:%d/", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s approved as such: status %d", host, resp.StatusCode)
		}
	}
	for _, l := range e.resolver.lookups() {
		if l == "localhost" || l == "127.0.0.1" {
			t.Fatalf("%s went to the resolver", l)
		}
	}
}

// TestConnectsToTheCheckedAddress: a public answer is dialled as that very
// IP:port; the name is never handed to the dialer to resolve again.
func TestConnectsToTheCheckedAddress(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), false)
	e.resolver.StaticResolver["registry.test"] = []netip.Addr{netip.MustParseAddr("93.184.215.14")}
	e.dialer.redirect = "127.0.0.1:" + strconv.Itoa(port) // stands in for the public host
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	want := net.JoinHostPort("93.184.215.14", strconv.Itoa(port))
	if d := e.dialer.dials(); len(d) != 1 || d[0] != want {
		t.Fatalf("dialled %v, want %s", d, want)
	}
	if l := e.resolver.lookups(); len(l) != 1 {
		t.Fatalf("resolved %v, want exactly once", l)
	}
}

func TestIsPrivate(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "100.127.255.254", "0.0.0.0", "0.1.2.3", "::", "::1", "fd00::1", "fc00::1",
		"fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::1", "224.0.0.1", "255.255.255.255", "ff02::1"} {
		if !isPrivate(netip.MustParseAddr(s)) {
			t.Errorf("%s: want private", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"} {
		if isPrivate(netip.MustParseAddr(s)) {
			t.Errorf("%s: want public", s)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Registry.NPMJS.org.": "registry.npmjs.org", "127.0.0.1": "127.0.0.1", "[::1]": "::1",
		"0:0::1": "::1", "localhost": "localhost", "my_host.test": "my_host.test",
	} {
		if got, err := normalizeHost(in); err != nil || got != want {
			t.Errorf("normalizeHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "a..b", "a b", "exa\x00mple.com", "bücher.de", "127.1", "2130706433",
		"0x7f.1", "fe80::1%eth0", "[127.0.0.1]", "a/b", strings.Repeat("a", 64) + ".com", "host:80"} {
		if got, err := normalizeHost(in); err == nil {
			t.Errorf("normalizeHost(%q) = %q, want an error", in, got)
		}
	}
}

// firstFailsDialer fails the first address it is given and sends the
// others to target.
type firstFailsDialer struct {
	target string
	addrs  []string
}

func (d *firstFailsDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.addrs = append(d.addrs, addr)
	if len(d.addrs) == 1 {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.target)
}

// TestDialsTheNextCheckedAddress: when the first address of an approved
// name fails, the next checked one is tried.
func TestDialsTheNextCheckedAddress(t *testing.T) {
	_, port := helloServer(t)
	dialer := &firstFailsDialer{target: "127.0.0.1:" + strconv.Itoa(port)}
	e := startProxy(t, allowHosts("registry.test"), false, func(o *Options) { o.Dialer = dialer })
	e.resolver.StaticResolver["registry.test"] = []netip.Addr{netip.MustParseAddr("2606:4700::1111"), netip.MustParseAddr("93.184.215.14")}
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%+v %v", resp, err)
	}
	resp.Body.Close()
	want := []string{fmt.Sprintf("[2606:4700::1111]:%d", port), fmt.Sprintf("93.184.215.14:%d", port)}
	if strings.Join(dialer.addrs, " ") != strings.Join(want, " ") {
		t.Fatalf("dialled %v, want %v", dialer.addrs, want)
	}
}
