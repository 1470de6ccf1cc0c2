package netproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
)

// traffic counts one upstream connection's bytes, and the run's bytes up.
type traffic struct {
	up, down atomic.Int64
	origin   *originState
}

func (t *traffic) addUp(n int64) {
	t.up.Add(n)
	t.origin.bytesUp.Add(n)
}

func (t *traffic) addDown(n int64) { t.down.Add(n) }

// countedConn counts what passes through an upstream connection that the
// proxy reads and writes itself (plain HTTP).
type countedConn struct {
	net.Conn
	t *traffic
}

func (c countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.t.addDown(int64(n))
	return n, err
}

func (c countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.t.addUp(int64(n))
	return n, err
}

// relayChunk is how many bytes one copy step moves before the counters are
// updated: the run's upload count lags by at most this much.
const relayChunk = 1 << 20

// relay passes bytes both ways between the client and upstream until both
// directions end, sending pending (bytes the client sent ahead) first. It
// copies between the connections themselves so that Linux splices two
// *net.TCPConn without copying through user space. A hand-written splice(2)
// loop per direction is no faster (BenchmarkBulkThroughput's splice-relay):
// the cost is the kernel's second TCP path, not Go's.
func relay(client net.Conn, pending []byte, upstream net.Conn, t *traffic) error {
	if len(pending) > 0 {
		n, err := upstream.Write(pending)
		t.addUp(int64(n))
		if err != nil {
			return err
		}
	}
	errc := make(chan error, 2)
	go func() { errc <- pipe(upstream, client, t.addUp) }()
	go func() { errc <- pipe(client, upstream, t.addDown) }()
	first := <-errc
	if first != nil {
		// One side broke: tear both down so the other copy ends too.
		client.Close()
		upstream.Close()
	}
	second := <-errc
	if first != nil {
		return first
	}
	if second != nil && !errors.Is(second, net.ErrClosed) {
		return second
	}
	return nil
}

// pipe copies src to dst in splice-friendly chunks (io.CopyN hands the
// kernel an *io.LimitedReader of the connection), then half-closes dst.
func pipe(dst, src net.Conn, count func(int64)) (err error) {
	defer func() {
		// Fail closed: a copy that breaks ends the tunnel, never the process.
		if p := recover(); p != nil {
			err = fmt.Errorf("relay failure: %v", p)
		}
	}()
	for {
		n, err := io.CopyN(dst, src, relayChunk)
		count(n)
		if err == io.EOF {
			closeWrite(dst)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
