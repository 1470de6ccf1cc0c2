package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// Echo is what a server attached to an assistant turn that it requires
// back, verbatim, in every later request: DeepSeek's thinking mode refuses
// a tool-call turn without its reasoning_content, Gemini 3 a function call
// without its thought_signature (extra_content.google).
type Echo struct {
	// Reasoning is the turn's reasoning, and ReasoningField the field it
	// came in ("reasoning_content" for DeepSeek and vLLM, "reasoning" for
	// Ollama and OpenRouter), which is the field it goes back in.
	Reasoning      string
	ReasoningField string
	// CallExtras holds each tool call's extra_content, by the call's
	// position in the message; nil where the server attached none.
	CallExtras []json.RawMessage
}

func (e Echo) empty() bool {
	if e.Reasoning != "" {
		return false
	}
	for _, x := range e.CallExtras {
		if len(x) > 0 {
			return false
		}
	}
	return true
}

// wireRequest is a Chat Completions request as Warden sends it: go-openai's
// types for the tools and the response format, Warden's own messages so an
// Echo can travel with the turn it belongs to.
type wireRequest struct {
	Model          string                               `json:"model"`
	Messages       []wireMessage                        `json:"messages"`
	Tools          []openai.Tool                        `json:"tools,omitempty"`
	ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format,omitempty"`
	Stream         bool                                 `json:"stream"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content,omitempty"`
	Name             string         `json:"name,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
}

type wireToolCall struct {
	ID           string              `json:"id"`
	Type         openai.ToolType     `json:"type"`
	Function     openai.FunctionCall `json:"function"`
	ExtraContent json.RawMessage     `json:"extra_content,omitempty"`
}

// reservedFields are the request fields Warden sets itself; a provider
// setting (config [model.extra]) cannot replace them.
var reservedFields = map[string]bool{"model": true, "messages": true, "tools": true, "response_format": true, "stream": true}

// requestBody encodes req for the endpoint, with extra (the providers'
// own fields: reasoning effort, routing) beside Warden's.
func requestBody(model string, req Request, stream bool, extra map[string]json.RawMessage) ([]byte, error) {
	w := wireRequest{Model: model, Tools: req.Tools, ResponseFormat: req.ResponseFormat, Stream: stream}
	for i, m := range req.Messages {
		w.Messages = append(w.Messages, toWire(m, req.Echoes[i]))
	}
	body, err := json.Marshal(w)
	if err != nil || len(extra) == 0 {
		return body, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if !reservedFields[k] {
			fields[k] = v
		}
	}
	return json.Marshal(fields)
}

func toWire(m openai.ChatCompletionMessage, echo Echo) wireMessage {
	w := wireMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	switch echo.ReasoningField {
	case "reasoning":
		w.Reasoning = echo.Reasoning
	case "reasoning_content":
		w.ReasoningContent = echo.Reasoning
	}
	for i, c := range m.ToolCalls {
		wc := wireToolCall{ID: c.ID, Type: c.Type, Function: c.Function}
		if wc.Type == "" {
			wc.Type = openai.ToolTypeFunction
		}
		if i < len(echo.CallExtras) {
			wc.ExtraContent = echo.CallExtras[i]
		}
		w.ToolCalls = append(w.ToolCalls, wc)
	}
	return w
}

// ExtraFields checks and encodes the providers' extra request fields.
func ExtraFields(extra map[string]any) (map[string]json.RawMessage, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(extra))
	for k, v := range extra {
		if reservedFields[k] {
			return nil, fmt.Errorf("[model.extra] cannot set %q: Warden sets it itself", k)
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("[model.extra] %s: %w", k, err)
		}
		out[k] = data
	}
	return out, nil
}

// argumentsText returns a tool call's arguments as the text they stand
// for: a JSON string's contents, or the JSON itself when a server (llama.cpp)
// sends an object.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}
