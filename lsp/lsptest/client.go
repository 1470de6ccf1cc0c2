package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Direction says who sent a message.
type Direction int

const (
	// Sent is client → server.
	Sent Direction = iota + 1
	// Received is server → client.
	Received
)

func (d Direction) String() string {
	if d == Sent {
		return "→"
	}
	return "←"
}

// Message is one JSON-RPC message on the wire.
type Message struct {
	Dir    Direction
	At     time.Time
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
	// Raw is the body as it was on the wire.
	Raw json.RawMessage `json:"-"`
}

// IsRequest reports whether m is a request (has a method and an id).
func (m Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// IsNotification reports whether m is a notification.
func (m Message) IsNotification() bool { return m.Method != "" && !m.IsRequest() }

// Decode decodes the params into v.
func (m Message) Decode(v any) error { return json.Unmarshal(m.Params, v) }

// RPCError is a JSON-RPC error response.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// JSON-RPC and LSP error codes.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
	CodeRequestFailed        = -32803
)

// Handler answers a server→client request. It runs on its own goroutine, so
// it may block (to keep an approval dialog pending, say).
type Handler func(params json.RawMessage) (result any, err *RPCError)

// Options configures Start.
type Options struct {
	// Bin is the warden binary; default Binary(t).
	Bin string
	// Args follow "serve"; default none.
	Args []string
	// Env is added to a clean environment whose XDG dirs point into a
	// temporary directory, so the user's config never leaks in.
	Env []string
	// Dir is the working directory and the workspace root Initialize sends;
	// default a new temporary directory.
	Dir string
	// Timeout bounds every wait; default 10s.
	Timeout time.Duration
}

// Client is an LSP client connected to a running warden serve.
type Client struct {
	t       testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *syncBuffer
	Dir     string
	Timeout time.Duration

	writeMu sync.Mutex
	nextID  int64

	mu       sync.Mutex
	log      []Message
	pending  map[string]chan Message
	handlers map[string]Handler
	changed  chan struct{}
	readErr  error
	versions map[string]int32
	exited   chan struct{}
	exitCode int
}

// Start runs `warden serve` and connects to it. The process is killed when
// the test ends if it is still running; a failed test logs the server's
// stderr and the message trace.
func Start(t testing.TB, opts Options) *Client {
	t.Helper()
	if opts.Bin == "" {
		opts.Bin = Binary(t)
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	home := t.TempDir()
	cmd := exec.Command(opts.Bin, append([]string{"serve"}, opts.Args...)...)
	cmd.Dir = opts.Dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home + "/config",
		"XDG_STATE_HOME=" + home + "/state",
	}, opts.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{
		t: t, cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, Dir: opts.Dir, Timeout: opts.Timeout,
		pending:  make(map[string]chan Message),
		handlers: make(map[string]Handler),
		changed:  make(chan struct{}),
		versions: make(map[string]int32),
		exited:   make(chan struct{}),
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", opts.Bin, err)
	}
	c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *RPCError) { return nil, nil })
	go c.readLoop(bufio.NewReader(stdout))
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		c.exitCode = cmd.ProcessState.ExitCode()
		if err != nil && c.exitCode < 0 {
			c.exitCode = -1
		}
		c.mu.Unlock()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			c.stdin.Close()
			select {
			case <-c.exited:
			case <-time.After(2 * time.Second):
				cmd.Process.Kill()
				<-c.exited
			}
		}
		if t.Failed() {
			t.Logf("warden stderr:\n%s", c.Stderr())
			t.Logf("messages:\n%s", c.Trace())
		}
	})
	return c
}

// Pid is the server process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// Stderr is everything the server wrote to stderr so far (its log).
func (c *Client) Stderr() string { return c.stderr.String() }

// OnRequest scripts the answer to a server→client request method, replacing
// any earlier script. Without one the client answers MethodNotFound, as
// Neovim does for requests it does not know (workDoneProgress/create is
// answered with null by default).
func (c *Client) OnRequest(method string, h Handler) {
	c.mu.Lock()
	c.handlers[method] = h
	c.mu.Unlock()
}

// Messages returns every message so far, in order.
func (c *Client) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.log...)
}

// Mark returns a position in the message log for WaitFrom.
func (c *Client) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

// Trace renders the message log for failure output.
func (c *Client) Trace() string {
	var b strings.Builder
	for _, m := range c.Messages() {
		raw := string(m.Raw)
		if len(raw) > 400 {
			raw = raw[:400] + "…"
		}
		fmt.Fprintf(&b, "%s %s %s\n", m.At.Format("15:04:05.000"), m.Dir, raw)
	}
	return b.String()
}

// WaitFor waits for a message from the server with the given method (a
// notification or a request) that satisfies match (nil matches any), looking
// at the whole log, and fails the test after the timeout.
func (c *Client) WaitFor(method string, match func(Message) bool) Message {
	c.t.Helper()
	return c.WaitFrom(0, method, match)
}

// WaitFrom is WaitFor looking only at messages from position mark on.
func (c *Client) WaitFrom(mark int, method string, match func(Message) bool) Message {
	c.t.Helper()
	m, err := c.waitFrom(mark, method, match, c.Timeout)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

// Find returns the first message from the server at or after mark with the
// method that satisfies match, without waiting.
func (c *Client) Find(mark int, method string, match func(Message) bool) (Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.log[min(mark, len(c.log)):] {
		if m.Dir == Received && m.Method == method && (match == nil || match(m)) {
			return m, true
		}
	}
	return Message{}, false
}

func (c *Client) waitFrom(mark int, method string, match func(Message) bool, timeout time.Duration) (Message, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		readErr := c.readErr
		c.mu.Unlock()
		if m, ok := c.Find(mark, method, match); ok {
			return m, nil
		}
		if readErr != nil {
			return Message{}, fmt.Errorf("waiting for %s: the server's output ended: %v", method, readErr)
		}
		select {
		case <-ch:
		case <-deadline.C:
			return Message{}, fmt.Errorf("no matching %s from the server within %v", method, timeout)
		}
	}
}

// Call sends a request and waits for the answer, decoding the result into
// result (may be nil). An error response is returned as *RPCError.
func (c *Client) Call(method string, params, result any) error {
	c.t.Helper()
	return c.Go(method, params).Wait(result)
}

// Pending is a request in flight.
type Pending struct {
	c      *Client
	ID     int64
	Method string
	ch     chan Message
}

// Go sends a request without waiting for its answer.
func (c *Client) Go(method string, params any) *Pending {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan Message, 1)
	c.pending[strconv.FormatInt(id, 10)] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return &Pending{c: c, ID: id, Method: method, ch: ch}
}

// Wait waits for the answer (see Call).
func (p *Pending) Wait(result any) error {
	p.c.t.Helper()
	m, err := p.WaitTimeout(p.c.Timeout)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	if result != nil && len(m.Result) > 0 {
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: decoding result %s: %w", p.Method, m.Result, err)
		}
	}
	return nil
}

// WaitTimeout waits at most d for the response message.
func (p *Pending) WaitTimeout(d time.Duration) (Message, error) {
	select {
	case m := <-p.ch:
		return m, nil
	case <-p.c.exited:
		select {
		case m := <-p.ch:
			return m, nil
		default:
		}
		return Message{}, fmt.Errorf("%s (id %d): the server exited before answering", p.Method, p.ID)
	case <-time.After(d):
		return Message{}, fmt.Errorf("%s (id %d): no answer within %v", p.Method, p.ID, d)
	}
}

// Cancel sends $/cancelRequest for this request (with its numeric id).
func (p *Pending) Cancel() {
	p.c.Notify("$/cancelRequest", map[string]any{"id": p.ID})
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *Client) send(msg any) {
	c.t.Helper()
	body, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatalf("marshal message: %v", err)
	}
	c.record(Sent, body)
	if err := c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))); err != nil {
		c.t.Fatalf("send to warden: %v", err)
	}
}

// WriteRaw writes bytes to the server's stdin as they are (for tests of
// malformed input). They are not recorded.
func (c *Client) WriteRaw(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(b)
	return err
}

func (c *Client) record(dir Direction, body []byte) Message {
	m := Message{Dir: dir, At: time.Now(), Raw: append(json.RawMessage(nil), body...)}
	_ = json.Unmarshal(body, &m)
	c.mu.Lock()
	c.log = append(c.log, m)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return m
}

func (c *Client) readLoop(r *bufio.Reader) {
	err := c.readMessages(r)
	c.mu.Lock()
	c.readErr = err
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *Client) readMessages(r *bufio.Reader) error {
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				return fmt.Errorf("server wrote a malformed header line %q", line)
			}
			if strings.EqualFold(name, "Content-Length") {
				n, err := strconv.Atoi(strings.TrimSpace(value))
				if err != nil {
					return fmt.Errorf("server wrote a bad Content-Length %q", value)
				}
				length = n
			}
		}
		if length < 0 {
			return errors.New("server wrote a message without Content-Length")
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		m := c.record(Received, body)
		switch {
		case m.IsRequest():
			go c.answer(m)
		case m.Method == "" && len(m.ID) > 0:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (c *Client) answer(m Message) {
	c.mu.Lock()
	h := c.handlers[m.Method]
	c.mu.Unlock()
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if h == nil {
		reply["error"] = &RPCError{Code: CodeMethodNotFound, Message: "lsptest: no scripted answer for " + m.Method}
	} else if result, err := h(m.Params); err != nil {
		reply["error"] = err
	} else {
		reply["result"] = result
	}
	body, _ := json.Marshal(reply)
	c.record(Sent, body)
	c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
}

// CloseStdin closes the server's input, as an editor that goes away does.
func (c *Client) CloseStdin() { c.stdin.Close() }

// WaitExit waits for the server process to end and returns its status.
func (c *Client) WaitExit() int {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(c.Timeout):
		c.t.Fatalf("warden did not exit within %v", c.Timeout)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitCode
}

// Exited reports whether the server process has ended.
func (c *Client) Exited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// Context returns a context that ends with the client's timeout.
func (c *Client) Context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.Timeout)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitLog waits until the server's stderr log contains s (stderr is copied
// asynchronously, so a line may arrive after the message that caused it).
func (c *Client) WaitLog(s string) {
	c.t.Helper()
	deadline := time.Now().Add(c.Timeout)
	for !strings.Contains(c.Stderr(), s) {
		if time.Now().After(deadline) {
			c.t.Fatalf("the server's log never said %q", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
