package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Turn is one scripted reply.
type Turn struct {
	// Text is streamed as content, a few words per chunk.
	Text string
	// Calls are streamed as tool calls with fragmented arguments.
	Calls []Call
	// Chunk is the size of each argument fragment; 0 means 7 bytes.
	Chunk int
	// Status, when not 0, answers with that HTTP status and an OpenAI error
	// body instead of a stream.
	Status int
	// Hold streams the turn's first chunk, then keeps the stream open until
	// the client goes away.
	Hold bool
	// Delay is slept between chunks.
	Delay time.Duration
	// Done, if set, receives the time the last byte of the turn was flushed
	// (benchmarks measure from there).
	Done chan<- time.Time
	// Raw, when set, is the whole response body, sent as is: a replay of a
	// real server's stream (see Replay) or a plain JSON reply. With Status
	// it is the error body.
	Raw string
	// ContentType is Raw's; text/event-stream unless set (or unless Raw
	// starts with "{", then application/json).
	ContentType string
	// Header is added to the response (Retry-After, for example).
	Header map[string]string
	// Message is the error message of a Status turn; a default names the
	// status.
	Message string
}

// Call is one scripted tool call.
type Call struct {
	ID, Name, Args string
}

// Request is what the server received for one call.
type Request struct {
	Model          string                               `json:"model"`
	Messages       []openai.ChatCompletionMessage       `json:"messages"`
	Tools          []openai.Tool                        `json:"tools"`
	ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format"`
	Stream         bool                                 `json:"stream"`
	Auth           string                               `json:"-"`
	// Body is the request as sent, for fields the types above do not
	// keep (reasoning_content, a tool call's extra_content, providers'
	// extra fields).
	Body json.RawMessage `json:"-"`
}

// Last returns the last message of the request.
func (r Request) Last() openai.ChatCompletionMessage {
	if len(r.Messages) == 0 {
		return openai.ChatCompletionMessage{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Server is the fake endpoint. URL ends in /v1, as OPENAI_BASE_URL does.
type Server struct {
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	script   []Turn
	respond  func(Request) Turn
	requests []Request
	canceled chan struct{}
	served   chan int
}

// New starts a server that plays turns in order, one per request, and stops
// it when the test ends. A request beyond the script gets HTTP 500 naming
// the problem.
func New(t testing.TB, turns ...Turn) *Server {
	s := &Server{script: turns, canceled: make(chan struct{}, 16), served: make(chan int, 1024)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.CloseClientConnections(); s.srv.Close() }

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	s.script = append(s.script, turns...)
	s.mu.Unlock()
}

// Respond makes f choose the turn for every request the script does not
// cover (for example, risk-summary requests, which carry a ResponseFormat).
func (s *Server) Respond(f func(Request) Turn) {
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Canceled receives once for each stream whose client went away before it
// ended.
func (s *Server) Canceled() <-chan struct{} { return s.canceled }

// Served receives the number of requests received, after each one.
func (s *Server) Served() <-chan int { return s.served }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "fake model: no route "+r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "fake model: read body: "+err.Error())
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "fake model: bad JSON: "+err.Error())
		return
	}
	req.Auth = r.Header.Get("Authorization")
	req.Body = body

	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	var turn Turn
	var ok bool
	if len(s.script) > 0 && (s.respond == nil || req.ResponseFormat == nil) {
		turn, s.script, ok = s.script[0], s.script[1:], true
	} else if s.respond != nil {
		turn, ok = s.respond(req), true
	}
	s.mu.Unlock()
	select {
	case s.served <- n:
	default:
	}
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("fake model: request %d has no scripted turn", n))
		return
	}
	for k, v := range turn.Header {
		w.Header().Set(k, v)
	}
	switch {
	case turn.Status != 0 && turn.Raw != "":
		writeRaw(w, turn.Status, turn.ContentType, turn.Raw)
		return
	case turn.Status != 0:
		msg := turn.Message
		if msg == "" {
			msg = fmt.Sprintf("fake model: scripted HTTP %d", turn.Status)
		}
		writeError(w, turn.Status, msg)
		return
	case turn.Raw != "":
		writeRaw(w, http.StatusOK, turn.ContentType, turn.Raw)
	default:
		s.stream(w, r, turn)
	}
	if r.Context().Err() != nil {
		select {
		case s.canceled <- struct{}{}:
		default:
		}
	}
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, turn Turn) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(delta map[string]any, finish string) bool {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
		if finish != "" {
			choice["finish_reason"] = finish
		}
		data, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
			"choices": []any{choice},
		})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		if turn.Delay > 0 {
			time.Sleep(turn.Delay)
		}
		return r.Context().Err() == nil
	}
	if !send(map[string]any{"role": "assistant"}, "") {
		return
	}
	if turn.Hold {
		<-r.Context().Done()
		return
	}
	for _, word := range splitWords(turn.Text) {
		if !send(map[string]any{"content": word}, "") {
			return
		}
	}
	chunk := turn.Chunk
	if chunk <= 0 {
		chunk = 7
	}
	for i, call := range turn.Calls {
		id := call.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		first := map[string]any{"index": i, "id": id, "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": ""}}
		if !send(map[string]any{"tool_calls": []any{first}}, "") {
			return
		}
		for args := call.Args; args != ""; {
			n := min(chunk, len(args))
			// A fragment ends on a character boundary, as a real stream's
			// JSON strings do (a cut rune would be sent as U+FFFD).
			for n < len(args) && !utf8.RuneStart(args[n]) {
				n++
			}
			frag := map[string]any{"index": i, "function": map[string]any{"arguments": args[:n]}}
			args = args[n:]
			if !send(map[string]any{"tool_calls": []any{frag}}, "") {
				return
			}
		}
	}
	finish := "stop"
	if len(turn.Calls) > 0 {
		finish = "tool_calls"
	}
	if !send(map[string]any{}, finish) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	if turn.Done != nil {
		turn.Done <- time.Now()
	}
}

// splitWords cuts text into chunks that keep their spaces, as models stream.
func splitWords(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text[min(1, len(text)):], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// writeRaw sends body as is, flushed as it is written so that a client
// sees a replay arrive as a stream would.
func writeRaw(w http.ResponseWriter, status int, contentType, body string) {
	if contentType == "" {
		contentType = "text/event-stream"
		if strings.HasPrefix(strings.TrimSpace(body), "{") {
			contentType = "application/json"
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	io.WriteString(w, body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "fake_error"}})
}
