package netproxy

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// memConn is a client connection that reads a fixed input and discards
// what is written to it.
type memConn struct {
	r *bytes.Reader
}

func (c *memConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// refusingDialer fails every dial and remembers the addresses.
type refusingDialer struct {
	mu    sync.Mutex
	addrs []string
}

func (d *refusingDialer) DialContext(_ context.Context, _, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	return nil, &net.OpError{Op: "dial", Err: errTestNoNetwork}
}

var errTestNoNetwork = &net.DNSError{Err: "no network in the fuzzer"}

// FuzzServeConn feeds arbitrary bytes to a connection: it must never
// panic, and nothing is resolved unless allowed.test was decided on first,
// and nothing but the addresses of allowed.test (or approved literals) is
// dialled.
func FuzzServeConn(f *testing.F) {
	for _, s := range []string{
		"GET http://allowed.test/ HTTP/1.1\r\n\r\n",
		"GET http://other.test:8080/x HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET http://allowed.test/ HTTP/1.1\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01",
		"CONNECT [::1]:22 HTTP/1.1\r\n\r\n",
		"POST http://allowed.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0callowed.test\x00\x50",
		"\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50",
		"\x05\x02\x00\x02\x05\x03\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x50",
		"\x04\x01\x00\x50\x7f\x00\x00\x01\x00",
		"\x00\xff garbage",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var decided []string
		var mu sync.Mutex
		d := &decider{fn: func(_ context.Context, r Request) Verdict {
			mu.Lock()
			decided = append(decided, r.Dest.Host)
			mu.Unlock()
			if r.Dest.Host == "" || strings.ContainsAny(r.Dest.Host, " /\x00[]%") {
				t.Errorf("decider asked about a malformed host %q", r.Dest.Host)
			}
			return Verdict{Allow: r.Dest.Host == "allowed.test" || r.Dest.Host == "::1"}
		}}
		res := &countingResolver{StaticResolver: StaticResolver{"allowed.test": {netip.MustParseAddr("93.184.215.14")}}}
		dialer := &refusingDialer{}
		srv := New(d, &recorder{}, Options{Resolver: res, Dialer: dialer})
		srv.ServeConn(context.Background(), &memConn{r: bytes.NewReader(in)}, testOrigin)
		for _, h := range res.lookups() {
			if h != "allowed.test" {
				t.Fatalf("resolved %q, which was not allowed", h)
			}
		}
		for _, a := range dialer.addrs {
			if ap := netip.MustParseAddrPort(a); ap.Addr() != netip.MustParseAddr("93.184.215.14") && ap.Addr() != netip.IPv6Loopback() {
				t.Fatalf("dialled %s", a)
			}
		}
	})
}
