package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
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
	// Echoes holds, by index in Messages, what the server attached to an
	// assistant turn that must go back with it.
	Echoes map[int]Echo
	// OnReasoning, if not nil, receives the model's reasoning as it
	// arrives (never part of the answer); OnNotice what the user should
	// know while waiting ("rate limited, retrying in 20 s").
	OnReasoning func(string)
	OnNotice    func(string)
}

// Reply is a whole assistant turn, with streamed tool-call fragments merged.
type Reply struct {
	Content      string
	ToolCalls    []openai.ToolCall
	FinishReason openai.FinishReason
	// Echo is what must travel back with the turn: its reasoning and its
	// calls' extra_content.
	Echo Echo
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
// Azure, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, Gemini, DeepSeek)
// with streaming and function calling.
type Client struct {
	api     *openai.Client // for the model list (Check)
	http    *http.Client
	model   string
	baseURL string
	// origins say where the model settings came from, so that a hint
	// names the place to fix them (the editor's settings, the environment
	// or config.toml).
	origins config.Origins
	chatURL string
	header  map[string]string
	extra   map[string]json.RawMessage
	// noStream is set once the server refused tools with streaming.
	noStream atomic.Bool
	// Retries is how many times a 429, a 5xx or a dropped connection is
	// retried before the first byte of a reply; Backoff is the first wait,
	// doubled each time. A 429's Retry-After replaces the wait when it is at
	// most MaxRetryAfter; a longer one is not waited for.
	Retries       int
	Backoff       time.Duration
	MaxRetryAfter time.Duration
}

// DefaultMaxRetryAfter is the longest Retry-After a client waits for.
const DefaultMaxRetryAfter = time.Minute

// DialTimeout bounds connecting to the model endpoint: a server that
// answers at all accepts a connection in far less.
const DialTimeout = 3 * time.Second

// NewClient returns a client for the configured model, or a *NoModelError.
func NewClient(m config.Model) (*Client, error) { return newClient(m, nil) }

// NewClientFor is NewClient for cfg's model; its messages name where each
// model setting came from (cfg.Origins).
func NewClientFor(cfg config.Config) (*Client, error) { return newClient(cfg.Model, cfg.Origins) }

func newClient(m config.Model, origins config.Origins) (*Client, error) {
	if e := noModel(m); e != nil {
		return nil, e
	}
	cfg := openai.DefaultConfig(m.APIKey)
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("model base URL %q is not an http(s) URL; set %s like http://127.0.0.1:11434/v1",
				m.BaseURL, origins.Where("model.base_url", "OPENAI_BASE_URL or [model] base_url"))
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
	httpClient := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DialTimeout}).DialContext,
		TLSHandshakeTimeout:   DialTimeout,
		ResponseHeaderTimeout: 2 * time.Minute,
		MaxIdleConnsPerHost:   4,
	}}
	cfg.HTTPClient = httpClient
	extra, err := ExtraFields(m.Extra)
	if err != nil {
		return nil, err
	}
	c := &Client{api: openai.NewClientWithConfig(cfg), http: httpClient, model: m.Name, baseURL: cfg.BaseURL, origins: origins, extra: extra,
		Retries: 4, Backoff: 500 * time.Millisecond, MaxRetryAfter: DefaultMaxRetryAfter}
	if cfg.APIType == openai.APITypeAzure {
		// go-openai's Azure addressing: the deployment in the path, the
		// key in its own header.
		c.chatURL = cfg.BaseURL + "/openai/deployments/" + url.PathEscape(m.Name) + "/chat/completions?api-version=" + url.QueryEscape(cfg.APIVersion)
		c.header = map[string]string{"api-key": m.APIKey}
	} else {
		c.chatURL = cfg.BaseURL + "/chat/completions"
		if m.APIKey != "" {
			c.header = map[string]string{"Authorization": "Bearer " + m.APIKey}
		}
	}
	return c, nil
}

// Stream implements Model. A failure before any text reached onText is
// retried with exponential backoff when trying again can help (a 429, a 5xx,
// a dropped connection), waiting as long as a 429's Retry-After asks, up to
// MaxRetryAfter; an error the server reported about the request itself is
// not. Cancelling ctx ends the stream at once and returns ctx's error.
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
		if refusesToolStream(err) && !c.noStream.Swap(true) {
			// Older llama.cpp: "Cannot use tools with stream". Ask
			// again without streaming, this time and from now on.
			notice(req, "the model server cannot stream tool calls; asking without streaming")
			attempt--
			continue
		}
		if delivered || attempt >= c.Retries || !retryable(err) {
			return Reply{}, c.explain(err)
		}
		// Full jitter keeps several Warden sessions from retrying in step.
		d := wait/2 + rand.N(wait/2+1)
		if after := retryAfter(err); after > 0 {
			if after > c.MaxRetryAfter {
				return Reply{}, c.explain(err)
			}
			d = after
		}
		if statusCode(err) == http.StatusTooManyRequests {
			notice(req, fmt.Sprintf("rate limited by the model server, retrying in %s", seconds(d)))
		} else if d >= time.Second {
			notice(req, fmt.Sprintf("the model server failed (%v), retrying in %s", clip(err.Error(), 120), seconds(d)))
		}
		select {
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		case <-time.After(d):
		}
		wait *= 2
	}
}

func notice(req Request, msg string) {
	if req.OnNotice != nil {
		req.OnNotice(msg)
	}
}

// seconds says d in whole seconds, rounded up: "20 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
}

func (c *Client) streamOnce(ctx context.Context, req Request, onText func(string)) (reply Reply, delivered bool, err error) {
	stream := !c.noStream.Load()
	body, err := requestBody(c.model, req, stream, c.extra)
	if err != nil {
		return Reply{}, false, fmt.Errorf("encode the request: %w", err)
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return Reply{}, false, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "text/event-stream, application/json")
	for k, v := range c.header {
		httpReq.Header.Set(k, v)
	}
	resp, err := c.http.Do(httpReq)
	if err != nil {
		return Reply{}, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Reply{}, false, httpError(resp)
	}
	// Reading blocks on the body; closing it is what makes cancellation
	// immediate even when the server holds the stream open silently.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()

	r := bufio.NewReader(resp.Body)
	if !stream || startsWithJSON(r) {
		reply, delivered, err = readWhole(r, onText, req.OnReasoning)
	} else {
		reply, delivered, err = readStream(r, onText, req.OnReasoning)
	}
	if err != nil && ctx.Err() != nil {
		return Reply{}, delivered, ctx.Err()
	}
	return reply, delivered, err
}

// startsWithJSON reports whether the body is a JSON object rather than
// events (some llama.cpp bindings answer a streaming request that way).
func startsWithJSON(r *bufio.Reader) bool {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return false
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		r.UnreadByte()
		return b == '{'
	}
}
