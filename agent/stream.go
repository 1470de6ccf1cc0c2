package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Warden reads the model's stream itself rather than with go-openai's
// stream reader, which cannot take what common servers send: arguments as
// a JSON object (llama.cpp), llama.cpp's "error:" event, a tool call's
// extra_content (Gemini), more than 300 keep-alive comments before the
// first token, or a plain JSON reply to a streaming request.

// sseEvent is one server-sent event: its name ("" for plain data, "error"
// for an error event) and its data lines joined.
type sseEvent struct{ name, data string }

// nextEvent reads one event. Comment lines (keep-alives) are skipped however
// many come; llama.cpp's "error: {...}" line, not a standard field, is an
// error event. It returns io.EOF at the end of the body.
func nextEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			return sseEvent{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			ev.name = ""
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data = append(data, value)
		case "event":
			ev.name = value
		case "error":
			ev.name = "error"
			data = append(data, value)
		}
	}
}

// wireChunk is a stream chunk, a whole (non-stream) completion, or an error
// object, whichever the server sent.
type wireChunk struct {
	Object  string       `json:"object"`
	Choices []wireChoice `json:"choices"`
	// Error is OpenAI's and OpenRouter's error object (OpenRouter sends it
	// with finish_reason "error"); Message is vLLM's, on a chunk whose
	// object is "error", and llama.cpp's in an error event.
	Error   *wireError `json:"error"`
	Message string     `json:"message"`
}

type wireError struct {
	Message string `json:"message"`
}

// UnmarshalJSON takes an error given as a bare string too (Ollama:
// {"error":"..."}).
func (e *wireError) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		e.Message = s
		return nil
	}
	type plain wireError
	return json.Unmarshal(data, (*plain)(e))
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        wireDelta  `json:"delta"`
	Message      *wireDelta `json:"message"`
	FinishReason string     `json:"finish_reason"`
}

type wireDelta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []wireCallDelta `json:"tool_calls"`
}

type wireCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

// errorText is the server's own message when chunk reports an error.
func (c wireChunk) errorText() string {
	switch {
	case c.Error != nil && c.Error.Message != "":
		return c.Error.Message
	case c.Error != nil:
		return "(no message)"
	case c.Object == "error":
		return c.Message
	}
	return ""
}

// StreamError is an error the model server reported in its response after
// it had accepted the request: its own words, not retried (the same request
// fails the same way).
type StreamError struct{ Message string }

func (e *StreamError) Error() string { return e.Message }

// errDropped says the stream ended before the model finished its turn (no
// finish_reason): a connection or a proxy dropped it.
var errDropped = fmt.Errorf("the stream ended before the model finished its turn (no finish_reason): %w", io.ErrUnexpectedEOF)

// errFinishError is an answer ended with finish_reason "error" and no
// error object to say why.
var errFinishError = &StreamError{Message: `the model server ended the answer with finish_reason "error" and no message`}

// maxToolCalls bounds the calls of one turn.
const maxToolCalls = 1024

// accumulator merges streamed deltas into one turn.
type accumulator struct {
	content, reasoning strings.Builder
	reasoningField     string
	calls              []*callBuilder
	// slots maps a server's tool-call index to the call it last started.
	slots  map[int]int
	finish string
}

type callBuilder struct {
	id, name string
	args     strings.Builder
	extra    json.RawMessage
}

// add takes one delta and returns its text and its reasoning.
func (a *accumulator) add(d wireDelta) (text, reasoning string) {
	a.content.WriteString(d.Content)
	reasoning = d.ReasoningContent
	if reasoning != "" {
		a.reasoningField = "reasoning_content"
	} else if d.Reasoning != "" {
		reasoning = d.Reasoning
		a.reasoningField = "reasoning"
	}
	a.reasoning.WriteString(reasoning)
	for _, tc := range d.ToolCalls {
		a.addCall(tc)
	}
	return d.Content, reasoning
}

// addCall merges one tool-call fragment. The first fragment of a call has
// its id and name, the rest add argument text at the same index; but
// Ollama, vLLM's tool parsers and Gemini adapters send parallel calls all at
// index 0, so a fragment with a new id starts a new call (as vercel/ai
// does), and so does a new name after complete arguments.
func (a *accumulator) addCall(tc wireCallDelta) {
	pos, ok := -1, false
	switch {
	case tc.Index != nil:
		pos, ok = a.slots[*tc.Index]
	case tc.ID == "" && len(a.calls) > 0:
		pos, ok = len(a.calls)-1, true // servers that omit the index continue the last call
	}
	if ok && startsNewCall(a.calls[pos], tc) {
		ok = false
	}
	if !ok {
		if len(a.calls) >= maxToolCalls {
			return
		}
		a.calls = append(a.calls, &callBuilder{})
		pos = len(a.calls) - 1
		if tc.Index != nil {
			if a.slots == nil {
				a.slots = map[int]int{}
			}
			a.slots[*tc.Index] = pos
		}
	}
	c := a.calls[pos]
	if tc.ID != "" {
		c.id = tc.ID
	}
	if name := tc.Function.Name; name != "" && name != c.name {
		if c.args.Len() == 0 {
			c.name += name // a name streamed in pieces, before the arguments
		}
	}
	c.args.WriteString(argumentsText(tc.Function.Arguments))
	if x := bytes.TrimSpace(tc.ExtraContent); len(x) > 0 && string(x) != "null" {
		c.extra = append(json.RawMessage(nil), x...)
	}
}

func startsNewCall(c *callBuilder, tc wireCallDelta) bool {
	if tc.ID != "" {
		return c.id != "" && tc.ID != c.id
	}
	return tc.Function.Name != "" && c.name != "" && json.Valid([]byte(c.args.String()))
}

func (a *accumulator) empty() bool {
	return a.content.Len() == 0 && a.reasoning.Len() == 0 && len(a.calls) == 0 && a.finish == ""
}

func (a *accumulator) reply() Reply {
	r := Reply{Content: a.content.String(), FinishReason: openai.FinishReason(a.finish),
		Echo: Echo{Reasoning: a.reasoning.String(), ReasoningField: a.reasoningField}}
	for i, c := range a.calls {
		if c.name == "" && c.args.Len() == 0 {
			continue // an index the server skipped
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		r.ToolCalls = append(r.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.name, Arguments: c.args.String()}})
		r.Echo.CallExtras = append(r.Echo.CallExtras, c.extra)
	}
	if r.Echo.empty() {
		r.Echo = Echo{}
	}
	return r
}

// decodeChunk reads one JSON value of the response: a chunk, a whole
// completion or an error.
func decodeChunk(data string) (wireChunk, error) {
	var c wireChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return c, fmt.Errorf("the model server sent a chunk Warden cannot read (%v): %s", err, clip(data, 200))
	}
	return c, nil
}

// readStream reads an event stream into a turn, passing text and reasoning
// on as they arrive. delivered says whether any text reached onText.
func readStream(r *bufio.Reader, onText, onReasoning func(string)) (reply Reply, delivered bool, err error) {
	var acc accumulator
	for {
		ev, err := nextEvent(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Reply{}, delivered, err
		}
		if ev.name == "error" {
			return Reply{}, delivered, &StreamError{Message: eventErrorText(ev.data)}
		}
		if strings.TrimSpace(ev.data) == "[DONE]" {
			break
		}
		chunk, err := decodeChunk(ev.data)
		if err != nil {
			return Reply{}, delivered, err
		}
		if msg := chunk.errorText(); msg != "" {
			return Reply{}, delivered, &StreamError{Message: msg}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // we never ask for n > 1
			}
			text, reasoning := acc.add(choice.Delta)
			if reasoning != "" && onReasoning != nil {
				onReasoning(reasoning)
			}
			if text != "" && onText != nil {
				delivered = true
				onText(text)
			}
			if choice.FinishReason != "" {
				acc.finish = choice.FinishReason
			}
		}
		if acc.finish == "error" {
			return Reply{}, delivered, errFinishError
		}
	}
	if acc.finish == "" {
		// Complete turns end with a finish_reason; without one a cut
		// answer would pass for the answer and a cut call would run.
		return Reply{}, delivered, errDropped
	}
	return acc.reply(), delivered, nil
}

// eventErrorText is the message of an error event: llama.cpp sends the
// error object itself or wrapped in {"error": ...}.
func eventErrorText(data string) string {
	if msg := serverMessage([]byte(data)); msg != "" {
		return msg
	}
	return strings.TrimSpace(data)
}

// serverMessage is the message of an error the server sent as JSON: its
// error object (or Ollama's bare string), else a top-level message (vLLM,
// llama.cpp); "" when data holds neither.
func serverMessage(data []byte) string {
	var c wireChunk
	if json.Unmarshal(data, &c) != nil {
		return ""
	}
	if msg := c.errorText(); msg != "" {
		return msg
	}
	return c.Message
}

// maxWholeReply bounds a plain JSON reply.
const maxWholeReply = 32 << 20

// readWhole reads a plain JSON completion: the reply to a request sent
// without streaming, or a server that answers a streaming request that way.
func readWhole(r io.Reader, onText, onReasoning func(string)) (Reply, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxWholeReply))
	if err != nil {
		return Reply{}, false, err
	}
	chunk, err := decodeChunk(string(data))
	if err != nil {
		return Reply{}, false, err
	}
	if msg := chunk.errorText(); msg != "" {
		return Reply{}, false, &StreamError{Message: msg}
	}
	var acc accumulator
	for _, choice := range chunk.Choices {
		if choice.Index != 0 || choice.Message == nil {
			continue
		}
		m := *choice.Message
		for i := range m.ToolCalls {
			// Whole calls: each is its own, whatever index it carries.
			n := i
			m.ToolCalls[i].Index = &n
		}
		text, reasoning := acc.add(m)
		if reasoning != "" && onReasoning != nil {
			onReasoning(reasoning)
		}
		if text != "" && onText != nil {
			onText(text)
		}
		acc.finish = choice.FinishReason
	}
	if acc.finish == "" {
		if acc.empty() {
			return Reply{}, false, fmt.Errorf("the model server answered with JSON that holds no reply: %s", clip(string(data), 200))
		}
		acc.finish = string(openai.FinishReasonStop) // a whole reply is complete
	}
	if acc.finish == "error" {
		return Reply{}, false, errFinishError
	}
	return acc.reply(), acc.content.Len() > 0, nil
}

// clip shortens s for a message.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "…"
}
