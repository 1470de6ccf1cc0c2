package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/wardenhq/warden/config"
)

// Model streams one assistant turn. Client is the real one; tests and
// benchmarks may script it.
type Model interface {
	// Stream sends the conversation and the tool definitions and returns the
	// assistant's reply once the stream ends. onText, if not nil, receives
	// text as it arrives.
	Stream(ctx context.Context, req Request, onText func(string)) (Reply, error)
}

// Request is one call to the model.
type Request struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// ResponseFormat asks for structured output (the risk summary); nil for
	// ordinary turns.
	ResponseFormat *openai.ChatCompletionResponseFormat
}

// Reply is a whole assistant turn, with streamed tool-call fragments merged.
type Reply struct {
	Content      string
	ToolCalls    []openai.ToolCall
	FinishReason openai.FinishReason
}

// Message returns the reply as the assistant message to append to the
// conversation.
func (r Reply) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls}
}

// ErrNoModel says the agent has no model to talk to. NewClient returns a
// *NoModelError, which is ErrNoModel and says exactly what is missing.
// Everything else in Warden works without a model.
var ErrNoModel = errors.New("no model configured")

// NoModelError names the settings a model still needs. Its message suits an
// editor (it mentions the editor's settings); Terminal is the same for the
// command line.
type NoModelError struct {
	// Missing are the variables to set, with a word on each.
	Missing []string
	// terminal leaves out the editor's settings.
	terminal bool
}

func (e *NoModelError) Is(target error) bool { return target == ErrNoModel }

// Terminal returns the message for `warden run` in a terminal, where an
// editor's settings mean nothing.
func (e *NoModelError) Terminal() *NoModelError {
	c := *e
	c.terminal = true
	return &c
}

func (e *NoModelError) Error() string {
	var b strings.Builder
	b.WriteString("no model configured: set ")
	b.WriteString(strings.Join(e.Missing, ", and "))
	b.WriteString("; or add to " + config.File() + ":\n" +
		"  [model]\n  name = \"gpt-4.1\"\n  base_url = \"https://api.openai.com/v1\"\n  api_key = \"sk-...\"")
	if !e.terminal {
		b.WriteString("\nEditors may also send the same settings as {\"model\": {\"name\", \"baseURL\", \"apiKey\"}}")
	}
	return b.String()
}

// noModel says what m lacks, or nil when it is configured.
func noModel(m config.Model) *NoModelError {
	if m.Configured() {
		return nil
	}
	e := &NoModelError{}
	if m.Name == "" {
		e.Missing = append(e.Missing, "WARDEN_MODEL to the model's name (e.g. gpt-4.1, qwen2.5-coder)")
	}
	if m.BaseURL == "" && m.APIKey == "" {
		e.Missing = append(e.Missing, "OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for a local server, e.g. http://127.0.0.1:11434/v1 for Ollama)")
	}
	return e
}

// Client talks to an OpenAI-compatible Chat Completions endpoint (OpenAI,
// Azure, Ollama, llama.cpp, vLLM, LM Studio) with streaming and function
// calling.
type Client struct {
	api     *openai.Client
	model   string
	baseURL string
	// Retries is how many times a 429, a 5xx or a dropped connection is
	// retried before the first byte of a reply; Backoff is the first wait,
	// doubled each time.
	Retries int
	Backoff time.Duration
}

// DialTimeout bounds connecting to the model endpoint: a server that
// answers at all accepts a connection in far less.
const DialTimeout = 3 * time.Second

// NewClient returns a client for the configured model, or a *NoModelError.
func NewClient(m config.Model) (*Client, error) {
	if e := noModel(m); e != nil {
		return nil, e
	}
	cfg := openai.DefaultConfig(m.APIKey)
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("model base URL %q is not an http(s) URL; set OPENAI_BASE_URL or [model] base_url like http://127.0.0.1:11434/v1", m.BaseURL)
		}
		cfg.BaseURL = strings.TrimRight(m.BaseURL, "/")
	}
	if strings.Contains(cfg.BaseURL, ".openai.azure.com") {
		azure := openai.DefaultAzureConfig(m.APIKey, cfg.BaseURL)
		azure.AzureModelMapperFunc = func(string) string { return m.Name }
		cfg = azure
	}
	// No overall timeout: a stream may legitimately run for minutes. The
	// context bounds it, and dialing and headers have their own limits: a
	// host that does not answer the connection is given up after
	// DialTimeout (a refused connection fails at once, and neither is
	// retried).
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DialTimeout}).DialContext,
		TLSHandshakeTimeout:   DialTimeout,
		ResponseHeaderTimeout: 2 * time.Minute,
		MaxIdleConnsPerHost:   4,
	}}
	return &Client{api: openai.NewClientWithConfig(cfg), model: m.Name, baseURL: cfg.BaseURL, Retries: 4, Backoff: 500 * time.Millisecond}, nil
}

// Stream implements Model. A retryable failure before any text reached
// onText is retried with exponential backoff; cancelling ctx ends the stream
// at once and returns ctx's error.
func (c *Client) Stream(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	wait := c.Backoff
	for attempt := 0; ; attempt++ {
		reply, delivered, err := c.streamOnce(ctx, req, onText)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		if delivered || attempt >= c.Retries || !retryable(err) {
			return Reply{}, c.explain(err)
		}
		// Full jitter keeps several Warden sessions from retrying in step.
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		case <-time.After(d):
		}
		wait *= 2
	}
}

func (c *Client) streamOnce(ctx context.Context, req Request, onText func(string)) (reply Reply, delivered bool, err error) {
	stream, err := c.api.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:          c.model,
		Messages:       req.Messages,
		Tools:          req.Tools,
		ResponseFormat: req.ResponseFormat,
		Stream:         true,
	})
	if err != nil {
		return Reply{}, false, err
	}
	defer stream.Close()
	// Recv blocks on the body; closing it is what makes cancellation
	// immediate even when the server holds the stream open silently.
	stop := context.AfterFunc(ctx, func() { stream.Close() })
	defer stop()

	var acc accumulator
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if acc.empty() {
				// A body that ends before any choice is a dropped
				// connection, not an empty answer.
				return Reply{}, delivered, fmt.Errorf("stream ended before the model answered: %w", io.ErrUnexpectedEOF)
			}
			return acc.reply(), delivered, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return Reply{}, delivered, ctx.Err()
			}
			return Reply{}, delivered, err
		}
		if text := acc.add(chunk); text != "" && onText != nil {
			delivered = true
			onText(text)
		}
	}
}

// accumulator merges streamed deltas. Tool-call fragments carry an index;
// the first fragment of a call has its id and name, the rest add argument
// text.
type accumulator struct {
	content strings.Builder
	calls   []openai.ToolCall
	args    []strings.Builder
	finish  openai.FinishReason
}

func (a *accumulator) add(chunk openai.ChatCompletionStreamResponse) string {
	var text string
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // we never ask for n > 1
		}
		if choice.Delta.Content != "" {
			a.content.WriteString(choice.Delta.Content)
			text += choice.Delta.Content
		}
		for _, tc := range choice.Delta.ToolCalls {
			i := len(a.calls) - 1
			if tc.Index != nil {
				i = *tc.Index
			} else if tc.ID != "" || i < 0 {
				i = len(a.calls) // servers that omit the index start a call with its id
			}
			if i < 0 || i > 1024 {
				continue
			}
			for len(a.calls) <= i {
				a.calls = append(a.calls, openai.ToolCall{Type: openai.ToolTypeFunction})
				a.args = append(a.args, strings.Builder{})
			}
			if tc.ID != "" {
				a.calls[i].ID = tc.ID
			}
			if tc.Function.Name != "" {
				a.calls[i].Function.Name += tc.Function.Name
			}
			a.args[i].WriteString(tc.Function.Arguments)
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
	return text
}

func (a *accumulator) empty() bool {
	return a.content.Len() == 0 && len(a.calls) == 0 && a.finish == ""
}

func (a *accumulator) reply() Reply {
	r := Reply{Content: a.content.String(), FinishReason: a.finish}
	for i, call := range a.calls {
		if call.Function.Name == "" && a.args[i].Len() == 0 {
			continue // an index the server skipped
		}
		call.Function.Arguments = a.args[i].String()
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", i)
		}
		r.ToolCalls = append(r.ToolCalls, call)
	}
	return r
}

func retryable(err error) bool {
	if code := statusCode(err); code != 0 {
		return code == http.StatusTooManyRequests || code >= 500
	}
	// Nothing listening, or no route to the host: retrying for seconds
	// only delays the message that says which URL to fix.
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

func statusCode(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// explain turns a transport or API failure into a message that says what to
// change.
func (c *Client) explain(err error) error {
	detail := err.Error()
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		detail = apiErr.Message
	}
	switch code := statusCode(err); {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("the model endpoint %s refused the API key (HTTP %d: %s); set OPENAI_API_KEY or [model] api_key in %s", c.baseURL, code, detail, config.File())
	case code == http.StatusNotFound:
		return fmt.Errorf("the model endpoint %s answered 404 for model %q (%s); check WARDEN_MODEL or [model] name, and that OPENAI_BASE_URL ends where the API lives (usually /v1)", c.baseURL, c.model, detail)
	case code == http.StatusTooManyRequests:
		return fmt.Errorf("the model endpoint %s is rate limiting (HTTP 429) and did not recover after %d retries: %s", c.baseURL, c.Retries, detail)
	case code >= 500:
		return fmt.Errorf("the model endpoint %s failed (HTTP %d) after %d retries: %s", c.baseURL, code, c.Retries, detail)
	case code != 0:
		return fmt.Errorf("the model endpoint %s rejected the request (HTTP %d): %s", c.baseURL, code, detail)
	}
	var netErr net.Error
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.As(err, &netErr) {
		return fmt.Errorf("cannot reach the model endpoint %s (%v); is the server running? Set OPENAI_BASE_URL or [model] base_url in %s", c.baseURL, err, config.File())
	}
	return fmt.Errorf("model stream from %s: %w", c.baseURL, err)
}
