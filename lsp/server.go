package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/wardenhq/warden/config"
)

// Options configures a Server.
type Options struct {
	// Version is reported in serverInfo and warden.status.
	Version string
	// Logger receives the server's logs; nil discards them. Never log to
	// stdout: it carries the protocol.
	Logger *slog.Logger
	// Config is the starting configuration (config.toml and environment);
	// editor settings are merged over it.
	Config config.Config
	// ConfigErr, when set, is shown to the user once the editor connects
	// (the config file could not be read).
	ConfigErr error
	// MaxMessageBytes bounds one incoming message; 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
}

// Server is one language server connection. Other files of this package add
// commands and code actions through RegisterCommand and
// RegisterCodeActions; see doc.go.
type Server struct {
	opts   Options
	log    *slog.Logger
	docs   *Documents
	client *Client

	// connCtx ends when the connection ends; jobs run under it.
	connCtx    context.Context
	cancelConn context.CancelFunc
	conn       jsonrpc2.Conn

	mu          sync.Mutex
	state       lifecycle
	cfg         config.Config
	caps        ClientCapabilities
	clientInfo  ClientInfo
	folders     []WorkspaceFolder
	cfgWatchers map[int]func(config.Config)
	nextWatcher int
	values      map[any]any
	// initSettingsErr is a bad initializationOptions, shown at initialized.
	initSettingsErr error

	jobs *jobTable

	// queue carries requests and notifications, in arrival order, from the
	// read loop to the single goroutine that handles them.
	queue *requestQueue
	// pending maps the ids of queued or running requests to their cancel.
	pendingMu sync.Mutex
	pending   map[string]context.CancelFunc

	exitCode int
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateRunning
	stateShutdown
)

// New creates a server; Serve runs it on a connection.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:        opts,
		log:         log,
		docs:        newDocuments(),
		cfg:         opts.Config,
		cfgWatchers: make(map[int]func(config.Config)),
		values:      make(map[any]any),
		pending:     make(map[string]context.CancelFunc),
		queue:       newRequestQueue(),
	}
	s.jobs = newJobTable(s)
	return s
}

// Serve speaks LSP on rwc until the client sends exit or the input ends. It
// returns the exit status LSP prescribes: 0 after shutdown, 1 otherwise.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) int {
	s.connCtx, s.cancelConn = context.WithCancel(ctx)
	defer s.cancelConn()
	st := newStream(rwc, s.opts.MaxMessageBytes, s.log)
	s.conn = jsonrpc2.NewConn(st)
	s.client = &Client{conn: s.conn, connCtx: s.connCtx, log: s.log, caps: s.Capabilities}
	s.exitCode = 1

	workerDone := make(chan struct{})
	go func() { s.work(); close(workerDone) }()
	s.conn.Go(s.connCtx, s.receive)
	select {
	case <-s.conn.Done():
		// The input ended: answer what was already read, then stop.
		if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			s.log.Error("connection ended", "err", err)
		} else {
			s.log.Info("the editor closed the connection")
		}
		s.queue.close()
		<-workerDone
	case <-s.connCtx.Done():
		// exit, or the process is stopping. Closing a blocking stdin does
		// not interrupt a pending read, so do not wait for the read loop.
		s.conn.Close()
		select {
		case <-s.conn.Done():
		case <-time.After(100 * time.Millisecond):
		}
		s.queue.close()
	}
	s.cancelConn()
	s.jobs.wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// Docs is the document store.
func (s *Server) Docs() *Documents { return s.docs }

// Client makes server→client calls (from jobs only; see Client).
func (s *Server) Client() *Client { return s.client }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Version is the Warden version this server reports.
func (s *Server) Version() string { return s.opts.Version }

// Context ends when the connection ends.
func (s *Server) Context() context.Context { return s.connCtx }

// Capabilities returns the client's capability flags from initialize.
func (s *Server) Capabilities() ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// ClientInfo returns the client's name and version from initialize.
func (s *Server) ClientInfo() ClientInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientInfo
}

// Value returns per-connection state stored under key, creating it with
// init the first time. Other files use it to keep their own state (an agent
// session, an approval cache) without fields on Server.
func (s *Server) Value(key any, init func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	if !ok && init != nil {
		v = init()
		s.values[key] = v
	}
	return v
}

// receive runs on the read loop: it handles $/cancelRequest at once (so a
// cancel overtakes queued work) and queues everything else in order.
func (s *Server) receive(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	if req.Method() == "$/cancelRequest" {
		s.cancelRequest(req.Params())
		return nil
	}
	item := &queued{reply: reply, req: req, ctx: s.connCtx}
	if call, ok := req.(*jsonrpc2.Call); ok {
		key := fmt.Sprintf("%q", call.ID())
		var cancel context.CancelFunc
		item.ctx, cancel = context.WithCancel(context.WithValue(s.connCtx, requestKeyCtx{}, key))
		item.key = key
		s.pendingMu.Lock()
		s.pending[key] = cancel
		s.pendingMu.Unlock()
	}
	s.queue.push(item)
	return nil
}

// cancelRequest cancels a queued or running request, or the job an
// executeCommand request started.
func (s *Server) cancelRequest(raw json.RawMessage) {
	var p cancelParams
	if err := json.Unmarshal(raw, &p); err != nil {
		s.log.Error("$/cancelRequest with bad params", "err", err)
		return
	}
	key, ok := idKey(p.ID)
	if !ok {
		s.log.Error("$/cancelRequest: id must be a number or a string", "id", string(p.ID))
		return
	}
	s.pendingMu.Lock()
	cancel := s.pending[key]
	s.pendingMu.Unlock()
	if cancel != nil {
		s.log.Debug("request cancelled", "id", key)
		cancel()
	}
	s.jobs.cancelByRequest(key)
}

// work handles queued messages one at a time, in order.
func (s *Server) work() {
	for {
		item, ok := s.queue.pop()
		if !ok {
			return
		}
		s.handle(item)
	}
}

func (s *Server) handle(item *queued) {
	method := item.req.Method()
	_, isCall := item.req.(*jsonrpc2.Call)
	reply := func(result any, err error) {
		if item.key != "" {
			s.pendingMu.Lock()
			delete(s.pending, item.key)
			s.pendingMu.Unlock()
		}
		// The reply must go out even if the request was cancelled: the
		// stream refuses to write under a cancelled ctx.
		if rerr := item.reply(context.WithoutCancel(item.ctx), result, err); rerr != nil {
			s.log.Debug("reply failed", "method", method, "err", rerr)
		}
	}
	if isCall && item.ctx.Err() != nil {
		reply(nil, jsonrpc2.NewError(requestCancelled, method+" was cancelled"))
		return
	}

	h, known := handlers[method]
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == "exit":
		s.exit()
		return
	case state == stateNew && method != "initialize":
		if isCall {
			reply(nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, fmt.Sprintf("%s before initialize: send initialize first", method)))
		} else {
			s.log.Warn("notification before initialize dropped", "method", method)
		}
		return
	case state == stateShutdown:
		if isCall {
			reply(nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s after shutdown: the server only accepts exit now", method)))
		}
		return
	case !known:
		if isCall {
			reply(nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("method %q is not supported by warden", method)))
		} else {
			s.log.Debug("notification ignored", "method", method)
		}
		return
	}

	result, err := h(s, item.ctx, item.req.Params())
	if !isCall {
		if err != nil {
			s.log.Error("notification failed", "method", method, "err", err)
		}
		return
	}
	if err != nil {
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) {
			if item.ctx.Err() != nil {
				err = jsonrpc2.NewError(requestCancelled, method+" was cancelled")
			} else {
				s.log.Error("request failed", "method", method, "err", err)
				err = jsonrpc2.NewError(requestFailed, err.Error())
			}
		}
		reply(nil, err)
		return
	}
	reply(result, nil)
}

// LSP error codes jsonrpc2 v0.10.0 does not define.
const (
	requestFailed    jsonrpc2.Code = -32803
	requestCancelled jsonrpc2.Code = -32800
)

// handlerFunc handles one method. For notifications the result is ignored
// and errors are logged.
type handlerFunc func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// handlers maps LSP methods to their handlers; each feature file adds its
// own from init.
var handlers = map[string]handlerFunc{}

func handle(method string, h handlerFunc) {
	if _, dup := handlers[method]; dup {
		panic("lsp: method handled twice: " + method)
	}
	handlers[method] = h
}

// requestQueue is an unbounded FIFO: the read loop never blocks on it.
type requestQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []*queued
	closed bool
}

type queued struct {
	ctx   context.Context
	key   string // request id key; "" for notifications
	reply jsonrpc2.Replier
	req   jsonrpc2.Request
}

func newRequestQueue() *requestQueue {
	q := &requestQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *requestQueue) push(it *queued) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *requestQueue) pop() (*queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return nil, false
	}
	it := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	return it, true
}

func (q *requestQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
