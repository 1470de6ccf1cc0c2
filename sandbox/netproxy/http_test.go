package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHTTPGetThroughProxy(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://Registry.TEST.:%d/pkg", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "hello Registry.TEST.:") {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	reqs := e.dec.requests()
	want := Destination{Host: "registry.test", Port: port, Protocol: HTTP}
	if len(reqs) != 1 || reqs[0].Dest != want || reqs[0].Origin.RunID != testOrigin.RunID {
		t.Fatalf("decider saw %+v, want one request for %v", reqs, want)
	}
	if got := e.dialer.dials(); len(got) != 1 || got[0] != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("dialled %v, want the checked address only", got)
	}
	recs := e.rec.wait(t, 1)
	if r := recs[0]; r.Dest != want || !r.Verdict.Allow || r.BytesUp == 0 || r.BytesDown == 0 || r.Err != "" {
		t.Fatalf("record %+v", r)
	}
}

func TestHTTPRefusedHostIsNeverResolvedNorDialled(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	resp, err := proxyClient(e.addr).Get(fmt.Sprintf("http://a.test:%d/steal", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Proxy-Error") != proxyErrRefused {
		t.Fatalf("status %d header %q", resp.StatusCode, resp.Header.Get("X-Proxy-Error"))
	}
	if !strings.Contains(string(body), "not on the list: a.test") || strings.Count(string(body), "\n") != 1 {
		t.Fatalf("body %q: want the one-line reason", body)
	}
	if l := e.resolver.lookups(); len(l) != 0 {
		t.Fatalf("refused host was resolved: %v", l)
	}
	if d := e.dialer.dials(); len(d) != 0 {
		t.Fatalf("refused host was dialled: %v", d)
	}
	refs := e.srv.Refusals(testOrigin.RunID)
	if len(refs) != 1 || refs[0].Dest.Host != "a.test" || refs[0].Reason != "not on the list: a.test" {
		t.Fatalf("refusals %+v", refs)
	}
	if r := e.rec.wait(t, 1)[0]; r.Verdict.Allow || r.Dest.Host != "a.test" {
		t.Fatalf("record %+v", r)
	}
	e.srv.Forget(testOrigin.RunID)
	if refs := e.srv.Refusals(testOrigin.RunID); refs != nil {
		t.Fatalf("refusals after Forget: %+v", refs)
	}
}

// rawRequest writes s on a new connection to the proxy and returns the
// connection and a reader on it.
func rawRequest(t *testing.T, addr, s string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

func TestHTTPKeepAliveDecidesEachDestination(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("a.test", "b.test"), true)
	c, br := rawRequest(t, e.addr, "")
	for i, host := range []string{"a.test", "b.test", "b.test", "a.test"} {
		fmt.Fprintf(c, "GET http://%s:%d/%d HTTP/1.1\r\nHost: evil.example\r\n\r\n", host, port, i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The Host header of an absolute-URI request is the URI's, never the client's.
		if want := fmt.Sprintf("hello %s:%d /%d", host, port, i); string(body) != want {
			t.Fatalf("request %d: body %q, want %q", i, body, want)
		}
	}
	var hosts []string
	for _, r := range e.dec.requests() {
		hosts = append(hosts, r.Dest.Host)
	}
	// b.test twice in a row reuses the upstream; every change of destination is decided.
	if strings.Join(hosts, ",") != "a.test,b.test,a.test" {
		t.Fatalf("decided %v", hosts)
	}
	// A refused destination on the same connection is answered 403 without a dial.
	before := len(e.dialer.dials())
	fmt.Fprintf(c, "GET http://registry.test:%d/ HTTP/1.1\r\n\r\n", port)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("refused destination on a kept-alive connection: %v %v", resp, err)
	}
	if len(e.dialer.dials()) != before {
		t.Fatal("refused destination was dialled")
	}
}

func TestHTTPHopByHopAndProxyHeadersStripped(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	_, br := rawRequest(t, e.addr, fmt.Sprintf("GET http://registry.test:%d/ HTTP/1.1\r\n"+
		"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nConnection: close, X-Secret-Hop\r\n"+
		"X-Secret-Hop: 1\r\nKeep-Alive: 5\r\nX-Kept: yes\r\n\r\n", port))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(resp.Header.Values("X-Got-Header"), ",")
	for _, h := range []string{"Proxy-Authorization", "Proxy-Connection", "X-Secret-Hop", "Keep-Alive"} {
		if strings.Contains(got, h) {
			t.Errorf("%s reached the destination (%s)", h, got)
		}
	}
	if !strings.Contains(got, "X-Kept") {
		t.Errorf("an end-to-end header was dropped: %s", got)
	}
}

func TestHTTPConnectToTLSServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure hello")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	e := startProxy(t, allowHosts("registry.test"), true)
	tlsConf := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsConf.ServerName = "example.com" // in httptest's certificate
	client := &http.Client{Transport: &http.Transport{
		Proxy:             http.ProxyURL(&url.URL{Scheme: "http", Host: e.addr}),
		TLSClientConfig:   tlsConf,
		DisableKeepAlives: true,
	}}
	resp, err := client.Get("https://registry.test:" + u.Port() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "secure hello" {
		t.Fatalf("body %q", body)
	}
	port, _ := strconv.Atoi(u.Port())
	if r := e.dec.requests(); len(r) != 1 || r[0].Dest != (Destination{Host: "registry.test", Port: port, Protocol: HTTPS}) {
		t.Fatalf("decided %+v", r)
	}
	rec := e.rec.wait(t, 1)[0]
	if rec.Dest.Protocol != HTTPS || rec.BytesUp < 100 || rec.BytesDown < 100 {
		t.Fatalf("record %+v: want the TLS bytes counted", rec)
	}

	// Twin: the same CONNECT to a refused host gets 403 and no TLS at all.
	_, br := rawRequest(t, e.addr, "CONNECT b.test:"+u.Port()+" HTTP/1.1\r\nHost: b.test\r\n\r\n")
	resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Proxy-Error") != proxyErrRefused {
		t.Fatalf("refused CONNECT: %+v %v", resp, err)
	}
	if l := e.resolver.lookups(); strings.Contains(strings.Join(l, ","), "b.test") {
		t.Fatalf("refused CONNECT host was resolved: %v", l)
	}
}

// TestConnectSendsEarlyBytes: bytes a client sends right after CONNECT,
// before the 200, reach the destination in order.
func TestConnectSendsEarlyBytes(t *testing.T) {
	echo, stop := echoServer(t)
	defer stop()
	_, port, _ := net.SplitHostPort(echo)
	e := startProxy(t, allowHosts("registry.test"), true)
	_, br := rawRequest(t, e.addr, "CONNECT registry.test:"+port+" HTTP/1.1\r\n\r\nearly bytes")
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %+v %v", resp, err)
	}
	got := make([]byte, len("early bytes"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "early bytes" {
		t.Fatalf("echo %q %v", got, err)
	}
}

// TestHTTPUpstreamClosedBetweenRequests: a kept-alive upstream that the
// server closed while idle is replaced, not used for a doomed request.
func TestHTTPUpstreamClosedBetweenRequests(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	srv.Config.IdleTimeout = 20 * time.Millisecond
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	e := startProxy(t, allowHosts("registry.test"), true)
	c, br := rawRequest(t, e.addr, "")
	for i := 0; i < 2; i++ {
		fmt.Fprintf(c, "GET http://registry.test:%s/%d HTTP/1.1\r\n\r\n", u.Port(), i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != fmt.Sprintf("ok /%d", i) {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond) // the upstream closes its idle connection
	}
	if d := e.dialer.dials(); len(d) != 2 {
		t.Fatalf("dials %v: want a fresh upstream for the second request", d)
	}
}

// TestHTTPResponsesStreamAndArriveWhole: a streamed (chunked) response
// reaches the client as it is produced, and a large body arrives intact.
func TestHTTPResponsesStreamAndArriveWhole(t *testing.T) {
	release := make(chan struct{})
	big := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, "first event\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "second event\n")
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	e := startProxy(t, allowHosts("registry.test"), true)
	c, br := rawRequest(t, e.addr, "GET http://registry.test:"+u.Port()+"/big HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != big {
		t.Fatalf("big body: %d bytes, %v", len(body), err)
	}
	fmt.Fprintf(c, "GET http://registry.test:%s/stream HTTP/1.1\r\n\r\n", u.Port())
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "first event\n" {
		t.Fatalf("first event %q %v: held back by the proxy", line, err)
	}
}
