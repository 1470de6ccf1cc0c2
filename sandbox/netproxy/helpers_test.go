package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testOrigin = Origin{RunID: "run-1", Command: []string{"npm", "install"}, Workdir: "/work/project"}

// decider answers with fn and remembers every request.
type decider struct {
	mu   sync.Mutex
	reqs []Request
	fn   func(ctx context.Context, r Request) Verdict
}

func (d *decider) Decide(ctx context.Context, r Request) Verdict {
	d.mu.Lock()
	d.reqs = append(d.reqs, r)
	d.mu.Unlock()
	return d.fn(ctx, r)
}

func (d *decider) requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.reqs...)
}

// allowHosts allows exactly the listed hosts.
func allowHosts(hosts ...string) *decider {
	return &decider{fn: func(_ context.Context, r Request) Verdict {
		for _, h := range hosts {
			if r.Dest.Host == h {
				return Verdict{Allow: true, Reason: "listed"}
			}
		}
		return Verdict{Reason: "not on the list: " + r.Dest.Host}
	}}
}

type recorder struct {
	mu   sync.Mutex
	recs []Record
}

func (r *recorder) Record(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
}

// wait returns the records once there are at least n of them.
func (r *recorder) wait(t *testing.T, n int) []Record {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		got := append([]Record(nil), r.recs...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d records, have %d: %+v", n, len(got), got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countingResolver counts lookups before answering from a static map.
type countingResolver struct {
	StaticResolver
	mu    sync.Mutex
	hosts []string
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, host)
	r.mu.Unlock()
	return r.StaticResolver.LookupNetIP(ctx, network, host)
}

func (r *countingResolver) lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.hosts...)
}

// countingDialer records every address it is asked to dial. When redirect
// is set, it dials that address instead (to stand in for a public host).
type countingDialer struct {
	mu       sync.Mutex
	addrs    []string
	redirect string
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	if d.redirect != "" {
		addr = d.redirect
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func (d *countingDialer) dials() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

type env struct {
	srv      *Server
	addr     string // proxy address
	dec      *decider
	rec      *recorder
	resolver *countingResolver
	dialer   *countingDialer
}

// loopbackNames are the test names that resolve to 127.0.0.1.
var loopbackNames = []string{"registry.test", "a.test", "b.test", "slow.test", "fast.test", "allowed.test"}

// startProxy serves a proxy on 127.0.0.1 for the test. Test names resolve
// to 127.0.0.1 and may reach it only if allowPrivate.
func startProxy(t *testing.T, d *decider, allowPrivate bool, tweak ...func(*Options)) *env {
	t.Helper()
	res := &countingResolver{StaticResolver: StaticResolver{}}
	for _, n := range loopbackNames {
		res.StaticResolver[n] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	e := &env{dec: d, rec: &recorder{}, resolver: res, dialer: &countingDialer{}}
	opts := Options{Resolver: res, Dialer: e.dialer, DialTimeout: 3 * time.Second}
	if allowPrivate {
		opts.AllowPrivate = func(string, netip.Addr) bool { return true }
	}
	for _, f := range tweak {
		f(&opts)
	}
	e.srv = New(d, e.rec, opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, l, testOrigin) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	e.addr = l.Addr().String()
	return e
}

// helloServer is an upstream HTTP server on 127.0.0.1 that answers with
// the request's Host and the names of the headers it received.
func helloServer(t *testing.T) (*httptest.Server, int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range r.Header {
			w.Header().Add("X-Got-Header", name)
		}
		fmt.Fprintf(w, "hello %s %s", r.Host, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return srv, port
}

// proxyClient is an HTTP client that goes through the proxy and keeps no
// idle connections (so the proxy's records come when a request ends).
func proxyClient(proxyAddr string) *http.Client {
	pu := &url.URL{Scheme: "http", Host: proxyAddr}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
}

// echoServer echoes every connection until it closes.
func echoServer(t testing.TB) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				buf := make([]byte, 32<<10)
				for {
					k, err := c.Read(buf)
					if k > 0 {
						if _, werr := c.Write(buf[:k]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String(), func() { l.Close() }
}
