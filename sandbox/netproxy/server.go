package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"syscall"
	"time"
)

// Server is the proxy. One Server serves every run; each connection is
// served with the Origin of the run it came from (ServeConn for a
// connection the sandbox hands over, Serve for a listener of one run). It
// is safe for concurrent use. When a run ends, Refusals tells what was
// refused and why, and Forget drops the run's state.
type Server struct {
	decider  Decider
	recorder Recorder
	opts     Options

	mu      sync.Mutex
	origins map[string]*originState
}

// New returns a proxy that asks d about every new destination and reports
// every connection to r.
func New(d Decider, r Recorder, opts Options) *Server {
	return &Server{decider: d, recorder: r, opts: opts.withDefaults(), origins: map[string]*originState{}}
}

// Serve accepts connections from l until ctx ends or l fails, serving each
// as coming from o. It returns nil when ctx ended; connections still open
// end with ctx.
func (s *Server) Serve(ctx context.Context, l net.Listener, o Origin) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Out of descriptors or a timeout passes; anything else ends
			// the proxy, which the sandbox sees as every connection refused.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(50 * time.Millisecond):
				}
				continue
			}
			return fmt.Errorf("netproxy: accept: %w", err)
		}
		go s.ServeConn(ctx, c, o)
	}
}

// ServeConn serves one client connection from the run o and closes it.
// The first byte tells SOCKS5 (0x05) from HTTP. It returns when the
// connection is done or ctx ends.
func (s *Server) ServeConn(ctx context.Context, c net.Conn, o Origin) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()

	lim := &limitReader{r: c, remain: math.MaxInt64}
	cn := &clientConn{s: s, o: o, st: s.origin(o.RunID), c: c, lim: lim, br: bufio.NewReader(lim), start: time.Now()}
	defer cn.recover()

	c.SetReadDeadline(time.Now().Add(s.opts.HandshakeTimeout))
	first, err := cn.br.Peek(1)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			cn.recordMalformed(fmt.Errorf("reading the first byte: %w", err))
		}
		return
	}
	switch first[0] {
	case 0x05:
		cn.serveSOCKS(ctx)
	case 0x04:
		// SOCKS4 has no name-based request we would decide on the same way:
		// say "rejected" in its own reply format.
		cn.c.Write([]byte{0, 0x5b, 0, 0, 0, 0, 0, 0})
		cn.recordMalformed(errors.New("SOCKS4 is not supported; use SOCKS5"))
	default:
		cn.serveHTTP(ctx)
	}
}

// clientConn is one accepted client connection.
type clientConn struct {
	s     *Server
	o     Origin
	st    *originState
	c     net.Conn
	lim   *limitReader
	br    *bufio.Reader
	start time.Time

	// failReply, when set, answers the client if the handler fails before
	// it has replied; each protocol sets it while a reply is owed.
	failReply func()
	// dest is the destination being served, for the record of a panic.
	dest Destination
}

// recover turns a panic in a handler into an error reply and a record:
// the client connection is closed, never left passing traffic through.
func (cn *clientConn) recover() {
	p := recover()
	if p == nil {
		return
	}
	if cn.failReply != nil {
		cn.failReply()
	}
	cn.c.Close()
	cn.s.record(Record{Dest: cn.dest, Origin: cn.o, Start: cn.start, Duration: time.Since(cn.start),
		Err: fmt.Sprintf("proxy failure: %v", p)})
}

// recordMalformed reports a connection that never named a destination.
func (cn *clientConn) recordMalformed(err error) {
	cn.s.record(Record{Origin: cn.o, Verdict: Verdict{Reason: "malformed request"}, Start: cn.start,
		Duration: time.Since(cn.start), Err: err.Error()})
}

func (s *Server) record(r Record) {
	if s.recorder != nil {
		s.recorder.Record(r)
	}
}

// awaitDecision runs fn while watching the client: if it closes the
// connection, the context given to fn ends, which cancels a pending
// dialog. Bytes the client sends meanwhile stay buffered for later.
func (cn *clientConn) awaitDecision(ctx context.Context, fn func(context.Context)) {
	if cn.c.SetReadDeadline(time.Time{}) != nil {
		// Without deadlines the watch could not be stopped: do without it.
		fn(ctx)
		return
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var stopping sync.Mutex
	stopped := false
	go func() {
		defer close(done)
		for n := cn.br.Buffered(); n < cn.br.Size(); n = cn.br.Buffered() {
			if _, err := cn.br.Peek(n + 1); err != nil {
				stopping.Lock()
				if !stopped {
					cancel(fmt.Errorf("client connection closed: %w", err))
				}
				stopping.Unlock()
				return
			}
		}
	}()
	fn(wctx)
	stopping.Lock()
	stopped = true
	stopping.Unlock()
	cn.c.SetReadDeadline(aLongTimeAgo)
	<-done
	cn.c.SetReadDeadline(time.Time{})
}

var aLongTimeAgo = time.Unix(1, 0)

// limitReader caps how much an HTTP header may take; the reader behind the
// bufio.Reader, reset for each request.
type limitReader struct {
	r      io.Reader
	remain int64
	hit    bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.remain <= 0 {
		l.hit = true
		return 0, io.EOF
	}
	if int64(len(p)) > l.remain {
		p = p[:l.remain]
	}
	n, err := l.r.Read(p)
	l.remain -= int64(n)
	return n, err
}

func (l *limitReader) set(n int64) { l.remain, l.hit = n, false }
