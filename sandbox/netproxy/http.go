package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strings"
	"time"
)

// Values of the X-Proxy-Error header, so a client or a test can tell why
// the proxy answered instead of the destination.
const (
	proxyErrRefused     = "refused"
	proxyErrPrivate     = "private-address"
	proxyErrBadRequest  = "bad-request"
	proxyErrTooLarge    = "header-too-large"
	proxyErrUnreachable = "unreachable"
	proxyErrInternal    = "internal"
)

// upstreamHTTP is the upstream connection of a kept-alive client
// connection serving plain HTTP requests.
type upstreamHTTP struct {
	dest    Destination
	verdict Verdict
	conn    net.Conn
	br      *bufio.Reader
	t       *traffic
	start   time.Time
	stop    func() bool
}

func (u *upstreamHTTP) finish(cn *clientConn, err error) {
	u.stop()
	u.conn.Close()
	rec := Record{Dest: u.dest, Origin: cn.o, Verdict: u.verdict, BytesUp: u.t.up.Load(), BytesDown: u.t.down.Load(),
		Start: u.start, Duration: time.Since(u.start)}
	if err != nil {
		rec.Err = err.Error()
	}
	cn.s.record(rec)
}

// idle reports whether a kept upstream connection can carry another
// request: still open, and nothing unsolicited waiting on it.
func (u *upstreamHTTP) idle() bool {
	return u.br.Buffered() == 0 && connIdle(u.conn)
}

// serveHTTP serves proxied HTTP requests until the client is done: plain
// requests with absolute URIs, kept alive across destinations (each new
// one decided), or one CONNECT that turns the connection into a tunnel.
func (cn *clientConn) serveHTTP(ctx context.Context) {
	var up *upstreamHTTP
	var upErr error
	defer func() {
		if up != nil {
			up.finish(cn, upErr)
		}
	}()
	for first := true; ; first = false {
		if !first {
			cn.c.SetReadDeadline(time.Now().Add(cn.s.opts.IdleTimeout))
		}
		// Like net/http, allow one read buffer of slack past the header.
		cn.lim.set(int64(cn.s.opts.MaxHeaderBytes) + 4096)
		req, err := http.ReadRequest(cn.br)
		tooLarge := cn.lim.hit
		cn.lim.set(1<<63 - 1)
		if err != nil {
			if !first && cn.br.Buffered() == 0 &&
				(errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded)) {
				// The client is done, or idle past IdleTimeout.
				return
			}
			if tooLarge {
				cn.httpError(http.StatusRequestHeaderFieldsTooLarge, proxyErrTooLarge, "request header too large")
			} else {
				cn.httpError(http.StatusBadRequest, proxyErrBadRequest, "malformed proxy request")
			}
			cn.recordMalformed(fmt.Errorf("http request: %w", err))
			return
		}
		cn.c.SetReadDeadline(time.Time{})
		cn.failReply = func() { cn.httpError(http.StatusBadGateway, proxyErrInternal, "proxy failure") }

		if req.Method == http.MethodConnect {
			if up != nil {
				up.finish(cn, nil)
				up = nil
			}
			cn.serveConnect(ctx, req)
			return
		}
		dest, err := plainDestination(req)
		if err != nil {
			cn.httpError(http.StatusBadRequest, proxyErrBadRequest, err.Error())
			cn.recordMalformed(err)
			return
		}
		if up != nil && (up.dest != dest || !up.idle()) {
			up.finish(cn, nil)
			up = nil
		}
		if up == nil {
			start := time.Now()
			conn, v, err := cn.open(ctx, dest)
			if err != nil {
				cn.httpFailure(dest, err)
				cn.s.record(Record{Dest: dest, Origin: cn.o, Verdict: v, Start: start, Duration: time.Since(start), Err: err.Error()})
				return
			}
			t := &traffic{origin: cn.st}
			cc := countedConn{Conn: conn, t: t}
			up = &upstreamHTTP{dest: dest, verdict: v, conn: conn, br: bufio.NewReader(cc), t: t, start: start,
				stop: context.AfterFunc(ctx, func() { conn.Close() })}
		}
		keep, err := cn.forward(req, up)
		if err != nil {
			upErr = err
			return
		}
		cn.failReply = nil
		if !keep {
			return
		}
	}
}

// plainDestination is the destination of a proxied plain HTTP request,
// which must carry an absolute http:// URI (the Host header is ignored).
func plainDestination(req *http.Request) (Destination, error) {
	if !req.URL.IsAbs() || req.URL.Host == "" {
		return Destination{}, errors.New("a proxy request needs an absolute URI (http://host/...)")
	}
	if req.URL.Scheme != "http" {
		return Destination{}, fmt.Errorf("scheme %q: use CONNECT for anything but http", req.URL.Scheme)
	}
	port := 80
	if p := req.URL.Port(); p != "" {
		var err error
		if port, err = parsePort(p); err != nil {
			return Destination{}, err
		}
	}
	return newDestination(req.URL.Hostname(), port, HTTP)
}

// forward sends one request upstream and its response back; keep says
// whether the client connection may carry another request. An error means
// the client got an error reply (or a broken response) and must be closed.
func (cn *clientConn) forward(req *http.Request, up *upstreamHTTP) (keep bool, err error) {
	clientClose := req.Close
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// The destination is decided and connected: let the client send its
		// body now rather than after its own timeout (curl waits a second).
		req.Header.Del("Expect")
		if _, err := io.WriteString(cn.c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false, fmt.Errorf("writing 100 Continue: %w", err)
		}
	}
	removeHopHeaders(req.Header)
	req.Header.Del("Host")
	req.RequestURI = ""
	req.Close = false
	if err := req.Write(countedConn{Conn: up.conn, t: up.t}); err != nil {
		cn.httpError(http.StatusBadGateway, proxyErrUnreachable, "could not send the request upstream")
		return false, fmt.Errorf("writing request upstream: %w", err)
	}
	for {
		resp, err := http.ReadResponse(up.br, req)
		if err != nil {
			cn.httpError(http.StatusBadGateway, proxyErrUnreachable, "bad or no response from upstream")
			return false, fmt.Errorf("reading response: %w", err)
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body.Close()
			cn.httpError(http.StatusBadGateway, proxyErrUnreachable, "protocol upgrades are not proxied; use CONNECT")
			return false, errors.New("upstream switched protocols")
		}
		removeHopHeaders(resp.Header)
		informational := resp.StatusCode >= 100 && resp.StatusCode < 200
		closeAfter := clientClose || resp.Close ||
			!informational && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 && req.Method != http.MethodHead && bodyAllowed(resp.StatusCode)
		resp.Close = closeAfter
		cn.failReply = nil // a reply is on its way: a failure now can only cut it short
		// The head goes out in one write; the body is flushed before each
		// wait for upstream, so streamed responses are not held back.
		bw := bufio.NewWriterSize(cn.c, 32<<10)
		body := resp.Body
		resp.Body = flushBeforeRead{r: body, bw: bw}
		werr := resp.Write(struct{ io.Writer }{bw}) // hides ReadFrom: Read flushes bw
		if werr == nil {
			werr = bw.Flush()
		}
		body.Close()
		if werr != nil {
			return false, fmt.Errorf("writing response to the client: %w", werr)
		}
		if informational {
			continue
		}
		return !closeAfter, nil
	}
}

// flushBeforeRead flushes what was written to the client before it may
// block reading more of the upstream body.
type flushBeforeRead struct {
	r  io.ReadCloser
	bw *bufio.Writer
}

func (f flushBeforeRead) Read(p []byte) (int, error) {
	if err := f.bw.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

func (f flushBeforeRead) Close() error { return f.r.Close() }

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}

// hopHeaders are meaningful for one hop only, and the proxy's own
// credentials never travel further.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// serveConnect serves a CONNECT request: decide, connect, answer 200 and
// pass the bytes both ways.
func (cn *clientConn) serveConnect(ctx context.Context, req *http.Request) {
	dest, err := connectDestination(req)
	if err != nil {
		cn.httpError(http.StatusBadRequest, proxyErrBadRequest, err.Error())
		cn.recordMalformed(err)
		return
	}
	start := time.Now()
	up, v, err := cn.open(ctx, dest)
	if err != nil {
		cn.httpFailure(dest, err)
		cn.s.record(Record{Dest: dest, Origin: cn.o, Verdict: v, Start: start, Duration: time.Since(start), Err: err.Error()})
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	t := &traffic{origin: cn.st}
	rec := Record{Dest: dest, Origin: cn.o, Verdict: v, Start: start}
	if _, err := io.WriteString(cn.c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		rec.Duration, rec.Err = time.Since(start), "client gone before the reply"
		cn.s.record(rec)
		return
	}
	cn.failReply = nil
	pending, _ := cn.br.Peek(cn.br.Buffered())
	err = relay(cn.c, pending, up, t)
	rec.BytesUp, rec.BytesDown, rec.Duration = t.up.Load(), t.down.Load(), time.Since(start)
	if err != nil {
		rec.Err = err.Error()
	}
	cn.s.record(rec)
}

// connectDestination reads the authority (host:port) of a CONNECT request.
func connectDestination(req *http.Request) (Destination, error) {
	host, port, err := net.SplitHostPort(req.RequestURI)
	if err != nil {
		return Destination{}, fmt.Errorf("CONNECT needs host:port: %w", err)
	}
	p, err := parsePort(port)
	if err != nil {
		return Destination{}, err
	}
	return newDestination(host, p, HTTPS)
}

// httpFailure answers a request the proxy could not connect.
func (cn *clientConn) httpFailure(dest Destination, err error) {
	var re *refusedError
	var rse *resolveError
	switch {
	case errors.As(err, &re) && re.Reason == ReasonPrivate && re.Detail != "":
		cn.httpError(http.StatusForbidden, proxyErrPrivate, fmt.Sprintf("%s refused: %s", dest, re.Reason))
	case errors.As(err, &re):
		cn.httpError(http.StatusForbidden, proxyErrRefused, fmt.Sprintf("%s refused: %s", dest, re.Reason))
	case errors.As(err, &rse):
		cn.httpError(http.StatusBadGateway, proxyErrUnreachable, fmt.Sprintf("%s: cannot resolve host", dest))
	default:
		cn.httpError(http.StatusBadGateway, proxyErrUnreachable, fmt.Sprintf("%s: cannot connect", dest))
	}
}

// httpError answers with status, an X-Proxy-Error header and a one-line
// body, and asks the client to close.
func (cn *clientConn) httpError(status int, kind, msg string) {
	body := "warden proxy: " + oneLine(msg) + "\n"
	fmt.Fprintf(cn.c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Proxy-Error: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), kind, len(body), body)
	cn.failReply = nil
}
