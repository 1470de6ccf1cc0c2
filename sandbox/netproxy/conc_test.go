package netproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBlockingDeciderOthersProceed: while one destination waits on a
// (user) decision, other connections are decided and served.
func TestBlockingDeciderOthersProceed(t *testing.T) {
	_, port := helloServer(t)
	release := make(chan struct{})
	d := &decider{fn: func(ctx context.Context, r Request) Verdict {
		if r.Dest.Host == "slow.test" {
			select {
			case <-release:
			case <-ctx.Done():
				return Verdict{Reason: "cancelled"}
			}
		}
		return Verdict{Allow: true}
	}}
	e := startProxy(t, d, true)
	slow := make(chan error, 1)
	go func() {
		resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://slow.test:%d/", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		slow <- err
	}()
	// Wait until the slow decision is pending.
	for len(e.dec.requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://fast.test:%d/%d", port, i))
		if err != nil {
			t.Fatalf("fast request %d blocked behind a pending decision: %v", i, err)
		}
		resp.Body.Close()
	}
	select {
	case err := <-slow:
		t.Fatalf("slow request finished before its decision: %v", err)
	default:
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatalf("slow request after release: %v", err)
	}
}

// TestClientCloseCancelsDecision: a client that hangs up while its
// destination is being decided cancels the decision's context; so does
// the end of the run's context.
func TestClientCloseCancelsDecision(t *testing.T) {
	for _, tc := range []struct{ name, hello string }{
		{"connect", "CONNECT slow.test:443 HTTP/1.1\r\n\r\n"},
		{"http", "GET http://slow.test/ HTTP/1.1\r\n\r\n"},
		{"socks", "\x05\x01\x00\x05\x01\x00\x03\x09slow.test\x01\xbb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending := make(chan struct{})
			cancelled := make(chan error, 1)
			d := &decider{fn: func(ctx context.Context, r Request) Verdict {
				close(pending)
				<-ctx.Done()
				cancelled <- context.Cause(ctx)
				return Verdict{Allow: true} // an ended context refuses whatever the answer
			}}
			e := startProxy(t, d, true)
			c, _ := rawRequest(t, e.addr, tc.hello)
			<-pending
			c.Close()
			select {
			case err := <-cancelled:
				if !strings.Contains(err.Error(), "client connection closed") {
					t.Fatalf("cause %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the decision was not cancelled when the client closed")
			}
			if rec := e.rec.wait(t, 1)[0]; rec.Verdict.Allow || rec.Dest.Host != "slow.test" {
				t.Fatalf("record %+v: want a refusal", rec)
			}
			if d := e.dialer.dials(); len(d) != 0 {
				t.Fatalf("dialled %v after a cancelled decision", d)
			}
		})
	}

	t.Run("run ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		pending := make(chan struct{})
		d := &decider{fn: func(ctx context.Context, r Request) Verdict {
			close(pending)
			<-ctx.Done()
			return Verdict{Allow: true}
		}}
		rec := &recorder{}
		srv := New(d, rec, Options{})
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { srv.ServeConn(ctx, server, testOrigin); close(done) }()
		go io.WriteString(client, "CONNECT slow.test:443 HTTP/1.1\r\n\r\n")
		<-pending
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("ServeConn did not end with its context")
		}
		if r := rec.wait(t, 1)[0]; r.Verdict.Allow {
			t.Fatalf("record %+v", r)
		}
	})
}

// TestByteCounts: the record counts exactly what crossed the tunnel, and
// the next decision for the run sees the bytes it uploaded so far.
func TestByteCounts(t *testing.T) {
	echo, stop := echoServer(t)
	defer stop()
	_, port, _ := net.SplitHostPort(echo)
	e := startProxy(t, allowHosts("registry.test"), true)
	c, br := rawRequest(t, e.addr, "CONNECT registry.test:"+port+" HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	const n = 3<<20 + 17 // more than one relay chunk
	go func() {
		c.Write(make([]byte, n))
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.Copy(io.Discard, br)
	if err != nil || got != n {
		t.Fatalf("echoed %d bytes (%v), want %d", got, err, n)
	}
	c.Close()
	rec := e.rec.wait(t, 1)[0]
	if rec.BytesUp != n || rec.BytesDown != n {
		t.Fatalf("record up %d down %d, want %d each", rec.BytesUp, rec.BytesDown, n)
	}
	if up := e.srv.BytesUp(testOrigin.RunID); up != n {
		t.Fatalf("run bytes up %d, want %d", up, n)
	}
	rawRequest(t, e.addr, "CONNECT a.test:1 HTTP/1.1\r\n\r\n")
	for len(e.dec.requests()) < 2 {
		time.Sleep(time.Millisecond)
	}
	if r := e.dec.requests()[1]; r.BytesUp != n {
		t.Fatalf("second request BytesUp %d, want %d", r.BytesUp, n)
	}
}

// TestMalformedRequests: garbage gets an error reply and a record, never a
// crash or a decision; the proxy keeps serving.
func TestMalformedRequests(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true, func(o *Options) { o.MaxHeaderBytes = 4096 })
	for _, tc := range []struct {
		name, send string
		status     int
	}{
		{"garbage", "\x16\x03\x01\x02\x00garbage\r\n\r\n", 400},
		{"oversized header", "GET http://registry.test/ HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 20000) + "\r\n\r\n", 431},
		{"many headers", "GET http://registry.test/ HTTP/1.1\r\n" + strings.Repeat("X-A: b\r\n", 4000) + "\r\n", 431},
		{"origin form", "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n", 400},
		{"https in plain request", "GET https://registry.test/ HTTP/1.1\r\n\r\n", 400},
		{"connect without port", "CONNECT registry.test HTTP/1.1\r\n\r\n", 400},
		{"connect bad port", "CONNECT registry.test:99999 HTTP/1.1\r\n\r\n", 400},
		{"numeric disguise", "CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", 400},
		{"control character", "GET http://regi%00stry.test/ HTTP/1.1\r\n\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, br := rawRequest(t, e.addr, tc.send)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no error reply: %v", err)
			}
			if resp.StatusCode != tc.status || resp.Header.Get("X-Proxy-Error") == "" {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, resp.Header.Get("X-Proxy-Error"), tc.status)
			}
		})
	}
	if r := e.dec.requests(); len(r) != 0 {
		t.Fatalf("malformed requests reached the decider: %+v", r)
	}
	if recs := e.rec.wait(t, 9); recs[0].Err == "" {
		t.Fatalf("record %+v: want the parse error", recs[0])
	}
	// Twin: the proxy still serves a well-formed request.
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after malformed requests: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestPanicFailsClosed: a failing decision answers with an error and
// closes the connection; nothing is passed through.
func TestPanicFailsClosed(t *testing.T) {
	_, port := helloServer(t)
	var calls atomic.Int32
	d := &decider{fn: func(ctx context.Context, r Request) Verdict {
		if calls.Add(1) <= 2 {
			panic("decider broke")
		}
		return Verdict{Allow: true}
	}}
	e := startProxy(t, d, true)
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err != nil || resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Proxy-Error") != proxyErrInternal {
		t.Fatalf("panic during HTTP: %+v %v", resp, err)
	}
	resp.Body.Close()
	if rep := socksRaw(t, e.addr, append([]byte{5, 1, 0, 3, 13}, "registry.test\x00\x50"...)); rep[1] != socksGeneralFailure {
		t.Fatalf("panic during SOCKS: reply %v", rep)
	}
	if d := e.dialer.dials(); len(d) != 0 {
		t.Fatalf("dialled after a panic: %v", d)
	}
	if rec := e.rec.wait(t, 2)[0]; !strings.Contains(rec.Err, "decider broke") {
		t.Fatalf("record %+v", rec)
	}
	// Twin: the next connection is served.
	resp, err = proxyClient(e.addr).Get(fmt.Sprintf("http://registry.test:%d/", port))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after a panic: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestHTTPDialFailureRepliesBadGateway(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	e := startProxy(t, allowHosts("registry.test", "unknown.test"), true)
	for _, host := range []string{"registry.test", "unknown.test"} { // nothing listening; no such name
		resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://%s:%d/", host, port))
		if err != nil || resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Proxy-Error") != proxyErrUnreachable {
			t.Fatalf("%s: %+v %v", host, resp, err)
		}
		resp.Body.Close()
	}
}

// TestRunEndClosesTunnels: when the run's context ends, open tunnels are
// closed and recorded.
func TestRunEndClosesTunnels(t *testing.T) {
	echo, stop := echoServer(t)
	defer stop()
	d := allowHosts("127.0.0.1")
	rec := &recorder{}
	srv := New(d, rec, Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l, testOrigin) }()
	c, br := rawRequest(t, l.Addr().String(), "CONNECT "+echo+" HTTP/1.1\r\n\r\n")
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, "ping")
	got := make([]byte, 4)
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := io.ReadAll(br); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading after the run ended: %v", err)
	}
	if r := rec.wait(t, 1)[0]; r.BytesUp != 4 || r.BytesDown != 4 {
		t.Fatalf("record %+v", r)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Fatal("the listener still accepts after the run ended")
	}
}

// TestServeConnOverUnixSocket: the sandbox may hand over connections that
// arrive on a unix socket; tunnels work and are counted the same.
func TestServeConnOverUnixSocket(t *testing.T) {
	echo, stop := echoServer(t)
	defer stop()
	dir, err := os.MkdirTemp("", "np")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := New(allowHosts("127.0.0.1"), rec, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, l, testOrigin)
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "\x05\x01\x00")
	_, p, _ := net.SplitHostPort(echo)
	pn, _ := strconv.Atoi(p)
	c.Write([]byte{5, 1, 0, 1, 127, 0, 0, 1, byte(pn >> 8), byte(pn)})
	rep := make([]byte, 12)
	if _, err := io.ReadFull(c, rep); err != nil || rep[1] != 0 || rep[3] != socksSucceeded {
		t.Fatalf("reply %v %v", rep, err)
	}
	const n = 3 << 20
	go func() {
		c.Write(make([]byte, n))
		c.(*net.UnixConn).CloseWrite()
	}()
	if got, err := io.Copy(io.Discard, c); err != nil || got != n {
		t.Fatalf("echoed %d (%v), want %d", got, err, n)
	}
	if r := rec.wait(t, 1)[0]; r.BytesUp != n || r.BytesDown != n || r.Dest.Protocol != SOCKS5 {
		t.Fatalf("record %+v", r)
	}
}
