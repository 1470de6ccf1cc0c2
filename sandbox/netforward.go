package sandbox

import (
	"context"
	"net"
	"sync"
	"time"
)

// proxyRun serves one run's proxy connections: each goes to the run's
// ProxyHandler in its own goroutine, and is closed when the handler returns
// or panics, and at the latest when the run ends (fail closed: a connection
// nobody serves is refused, never let through).
type proxyRun struct {
	handler ProxyHandler
	ctx     context.Context
	cancel  context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	// stopFns end the run's listeners or forwarding socket.
	stopFns []func()
}

func newProxyRun(ctx context.Context, h ProxyHandler) *proxyRun {
	ctx, cancel := context.WithCancel(ctx)
	return &proxyRun{handler: h, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
}

// onStop adds f to what stop runs first.
func (r *proxyRun) onStop(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopFns = append(r.stopFns, f)
}

// maxProxyConns caps one run's open proxy connections, so a command that
// opens them in a loop cannot use up the launcher's descriptors: past it a
// new connection is closed at once.
const maxProxyConns = 512

// serve hands c to the handler; it returns at once.
func (r *proxyRun) serve(c net.Conn) {
	r.mu.Lock()
	if r.closed || len(r.conns) >= maxProxyConns {
		r.mu.Unlock()
		c.Close()
		return
	}
	r.conns[c] = struct{}{}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer func() {
			recover() // a broken handler refuses this connection, nothing more
			c.Close()
			r.mu.Lock()
			delete(r.conns, c)
			r.mu.Unlock()
		}()
		r.handler.ServeConn(r.ctx, c)
	}()
}

// proxyDrain bounds how long stop waits for handlers that ignore their
// context once their connections are closed.
const proxyDrain = 2 * time.Second

// stop ends the run's proxying: no new connection, every open one closed,
// the handlers' context done. It returns the handler's notes for the result.
func (r *proxyRun) stop() []string {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	fns := r.stopFns
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	for _, f := range fns {
		f()
	}
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(proxyDrain):
	}
	return notesOf(r.handler)
}

// notesOf asks h for its notes; a handler that panics here has none.
func notesOf(h ProxyHandler) (notes []string) {
	defer func() {
		if recover() != nil {
			notes = nil
		}
	}()
	if n, ok := h.(NetworkNoter); ok {
		return n.NetworkNotes()
	}
	return nil
}
