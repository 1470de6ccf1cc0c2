package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/framing"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
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
	// framing.DefaultMaxMessageBytes.
	MaxMessageBytes int64
}

// Server is one language server connection. Other files of this package add
// commands and code actions through RegisterCommand and
// RegisterCodeActions; see doc.go.
type Server struct {
	opts   Options
	log    *slog.Logger
	docs   *textdoc.Store
	client *Client

	// connCtx ends when the connection ends; jobs run under it.
	connCtx    context.Context
	cancelConn context.CancelFunc
	conn       jsonrpc2.Conn

	mu          sync.Mutex
	state       lifecycle
	cfg         config.Config
	caps        wire.ClientCapabilities
	clientInfo  ClientInfo
	folders     []WorkspaceFolder
	cfgWatchers map[int]func(config.Config)
	nextWatcher int
	values      map[any]any
	// initSettingsErr is a bad initializationOptions, shown at initialized.
	initSettingsErr error
	// recovered says what was done at initialize about interrupted
	// changes, shown at initialized.
	recovered []recoveredMessage

	jobs    *jobs.Table
	latency latencies

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
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = framing.DefaultMaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:        opts,
		log:         log,
		docs:        textdoc.NewStore(),
		cfg:         opts.Config,
		cfgWatchers: make(map[int]func(config.Config)),
		values:      make(map[any]any),
	}
	s.jobs = jobs.NewTable(jobConn{s})
	return s
}

// Serve speaks LSP on rwc until the client sends exit or the input ends. It
// returns the exit status LSP prescribes: 0 after shutdown, 1 otherwise.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) int {
	s.connCtx, s.cancelConn = context.WithCancel(ctx)
	defer s.cancelConn()
	st := framing.New(rwc, s.opts.MaxMessageBytes, s.log)
	st.OnSkip = s.skippedMessage
	s.conn = jsonrpc2.NewConn(st)
	s.client = &Client{conn: s.conn, connCtx: s.connCtx, log: s.log, caps: s.Capabilities}
	s.exitCode = 1

	s.conn.Go(s.connCtx, s.receive)
	select {
	case <-s.conn.Done():
		// The input ended (everything read was answered on the way).
		if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			s.log.Error("connection ended", "err", err)
		} else {
			s.log.Info("the editor closed the connection")
		}
	case <-s.connCtx.Done():
		// exit, or the process is stopping. Closing a blocking stdin does
		// not interrupt a pending read, so do not wait for the read loop.
		s.conn.Close()
		select {
		case <-s.conn.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.cancelConn()
	s.jobs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// Docs is the document store.
func (s *Server) Docs() *textdoc.Store { return s.docs }

// Client makes server→client calls (from jobs only; see Client).
func (s *Server) Client() *Client { return s.client }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Version is the Warden version this server reports.
func (s *Server) Version() string { return s.opts.Version }

// Context ends when the connection ends.
func (s *Server) Context() context.Context { return s.connCtx }

// Capabilities returns the client's capability flags from initialize.
func (s *Server) Capabilities() wire.ClientCapabilities {
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

// receive handles each message on the read loop, in arrival order. Handlers
// are quick and never wait on the client (work that does runs as a job), so
// nothing queues behind them and a reply costs no goroutine hand-off.
func (s *Server) receive(_ context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	began := time.Now()
	method := req.Method()
	if method == "$/cancelRequest" {
		s.cancelRequest(req.Params())
		return nil
	}
	ctx := context.WithValue(s.connCtx, readLoopKey{}, true)
	call, isCall := req.(*jsonrpc2.Call)
	if isCall {
		ctx = context.WithValue(ctx, requestKeyCtx{}, fmt.Sprintf("%q", call.ID()))
	}
	respond := func(result any, err error) {
		if !isCall {
			return
		}
		// Replies go out even when ctx has ended: the stream refuses to
		// write under a cancelled ctx.
		if rerr := reply(context.WithoutCancel(ctx), result, err); rerr != nil {
			s.log.Debug("reply failed", "method", method, "err", rerr)
		}
	}

	h, known := handlers[method]
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == "exit":
		s.exit()
		return nil
	case state == stateNew && method != "initialize":
		if isCall {
			respond(nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, fmt.Sprintf("%s before initialize: send initialize first", method)))
		} else {
			s.log.Warn("notification before initialize dropped", "method", method)
		}
		return nil
	case state == stateShutdown:
		respond(nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s after shutdown: the server only accepts exit now", method)))
		return nil
	case !known:
		if isCall {
			respond(nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("method %q is not supported by warden", method)))
		} else {
			s.log.Debug("notification ignored", "method", method)
		}
		return nil
	}

	result, err := s.call(h, ctx, method, req.Params())
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("handled", "method", method, "took", time.Since(began), "err", err)
	}
	if !isCall {
		if err != nil {
			s.log.Error("notification failed", "method", method, "err", err)
		}
		return nil
	}
	if err != nil {
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) {
			s.log.Error("request failed", "method", method, "err", err)
			err = jsonrpc2.NewError(requestFailed, err.Error())
		}
		result = nil
	}
	respond(result, err)
	s.latency.record(method, time.Since(began))
	return nil
}

// skippedMessage keeps the document store honest when a change was too big
// to read: the document it changed (or, if that is unknown, every open
// document) is out of sync until the editor sends its whole text again.
func (s *Server) skippedMessage(method string, u protocol.DocumentURI) {
	if method != "textDocument/didChange" {
		return
	}
	reason := fmt.Errorf("a didChange over the %d-byte message limit was skipped", s.opts.MaxMessageBytes)
	if u != "" {
		s.docs.MarkOutOfSync(u, reason)
		return
	}
	for _, d := range s.docs.All() {
		s.docs.MarkOutOfSync(d.URI, reason)
	}
}

// readLoopKey marks the contexts of handlers: a client call made with one
// would wait for an answer that only the blocked read loop could read.
type readLoopKey struct{}

// call runs a handler, turning a panic into an error: one bad request must
// not take the editor's server down.
func (s *Server) call(h handlerFunc, ctx context.Context, method string, params json.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("internal error in %s: %v", method, r)
		}
	}()
	return h(s, ctx, params)
}

// cancelRequest cancels the job an executeCommand request started. Other
// requests are answered before the next message is read, so there is
// nothing else to cancel.
func (s *Server) cancelRequest(raw json.RawMessage) {
	var p wire.CancelParams
	if err := json.Unmarshal(raw, &p); err != nil {
		s.log.Error("$/cancelRequest with bad params", "err", err)
		return
	}
	key, ok := wire.IDKey(p.ID)
	if !ok {
		s.log.Error("$/cancelRequest: id must be a number or a string", "id", string(p.ID))
		return
	}
	s.jobs.CancelByRequest(key)
}

// LSP error codes jsonrpc2 v0.10.0 does not define.
const (
	requestFailed jsonrpc2.Code = -32803
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
