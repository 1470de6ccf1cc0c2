package agent

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

//go:embed system_prompt.md
var systemPrompt string

// SystemPrompt returns the embedded system prompt.
func SystemPrompt() string { return systemPrompt }

const (
	// DefaultMaxTurns bounds one task's model round trips.
	DefaultMaxTurns = 60
	// MaxDeniedRepeats is how often the model may repeat a call that was
	// already denied (it is never asked again) before the task stops.
	MaxDeniedRepeats = 2
)

// SessionConfig is what a session is built from.
type SessionConfig struct {
	ID    string
	Model Model
	Env   ToolEnv
	// Facts describe the environment for the model: the sandbox mode, the
	// approval policy, the editor. One per line.
	Facts []string
	// TranscriptDir, when set, receives the session's transcripts.
	TranscriptDir string
	MaxTurns      int
	// OnText receives the model's text as it streams.
	OnText func(string)
	// OnReasoning receives the model's reasoning as it streams, for
	// servers that send it: shown as such, never as the answer.
	OnReasoning func(string)
}

// Session is one conversation with the model: a task and its follow-ups.
// It is used from one goroutine at a time.
type Session struct {
	ID         string
	Transcript *Transcript

	cfg      SessionConfig
	reg      *Registry
	messages []openai.ChatCompletionMessage
	// echoes holds, by index in messages, what the server attached to
	// an assistant turn that must go back with it.
	echoes map[int]Echo
	denied map[string]int
}

// Result is how a task ended.
type Result struct {
	// Answer is the model's final text.
	Answer string
	// Stopped is set when the task ended without an answer: the user chose
	// "Deny and stop", the model kept repeating a denied call, or the turn
	// bound was reached. Reason says which, for the user.
	Stopped bool
	Reason  string
	Turns   int
}

// NewSession starts a conversation. With TranscriptDir set it opens the
// transcript files.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Model == nil {
		return nil, ErrNoModel
	}
	if cfg.ID == "" {
		cfg.ID = NewSessionID()
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	s := &Session{ID: cfg.ID, cfg: cfg, denied: map[string]int{}, echoes: map[int]Echo{}}
	s.reg = NewRegistry(&s.cfg.Env)
	if cfg.TranscriptDir != "" {
		t, err := OpenTranscript(cfg.TranscriptDir, cfg.ID)
		if err != nil {
			return nil, err
		}
		s.Transcript = t
	}
	prompt := systemPrompt + "\n# Environment\n- Workspace root: " + cfg.Env.Dir + "\n"
	for _, f := range cfg.Facts {
		prompt += "- " + f + "\n"
	}
	s.messages = []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: prompt}}
	return s, nil
}

// Close closes the transcript.
func (s *Session) Close() error { return s.Transcript.Close() }

// Messages returns the conversation so far.
func (s *Session) Messages() []openai.ChatCompletionMessage { return s.messages }

// Run gives the model a task and runs tool calls until it answers, the user
// stops it, or ctx is cancelled. After any of those the session stays
// usable for a follow-up task.
func (s *Session) Run(ctx context.Context, task string) (Result, error) {
	obs := s.cfg.Env.observer()
	s.messages = append(s.messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: task})
	s.Transcript.Record(Event{Kind: "task", Text: task})
	for turn := 1; turn <= s.cfg.MaxTurns; turn++ {
		obs.Step("Waiting for the model")
		reply, err := s.cfg.Model.Stream(ctx, Request{Messages: s.messages, Tools: s.reg.Definitions(), Echoes: s.echoes,
			OnReasoning: s.cfg.OnReasoning, OnNotice: obs.Step}, s.cfg.OnText)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			s.Transcript.Record(Event{Kind: "error", Text: err.Error()})
			return Result{Turns: turn}, err
		}
		if reply.Echo.Reasoning != "" {
			s.Transcript.Record(Event{Kind: "reasoning", Text: reply.Echo.Reasoning})
		}
		s.appendReply(reply)
		if len(reply.ToolCalls) == 0 {
			s.Transcript.Record(Event{Kind: "answer", Text: reply.Content})
			return Result{Answer: reply.Content, Turns: turn}, nil
		}
		if reply.Content != "" {
			s.Transcript.Record(Event{Kind: "assistant", Text: reply.Content})
		}
		if stop, reason := s.runCalls(ctx, reply.ToolCalls); stop {
			if ctx.Err() != nil {
				s.Transcript.Record(Event{Kind: "error", Text: ctx.Err().Error()})
				return Result{Turns: turn}, ctx.Err()
			}
			s.Transcript.Record(Event{Kind: "stopped", Text: reason})
			return Result{Stopped: true, Reason: reason, Turns: turn}, nil
		}
	}
	reason := fmt.Sprintf("the agent did not finish within %d model turns", s.cfg.MaxTurns)
	s.Transcript.Record(Event{Kind: "stopped", Text: reason})
	return Result{Stopped: true, Reason: reason, Turns: s.cfg.MaxTurns}, nil
}

// appendReply adds the model's turn to the conversation as the server will
// accept it back: arguments that are not a JSON object (a cut or malformed
// call) are sent back as {} — Ollama refuses every later request whose
// history holds them — while the call itself still runs with what the model
// sent, so its result tells the model what was wrong. What the server
// attached to the turn (reasoning, thought signatures) travels with it.
func (s *Session) appendReply(reply Reply) {
	msg := reply.Message()
	msg.ToolCalls = append([]openai.ToolCall(nil), msg.ToolCalls...)
	for i, call := range msg.ToolCalls {
		if !isJSONObject(call.Function.Arguments) {
			msg.ToolCalls[i].Function.Arguments = "{}"
		}
	}
	if !reply.Echo.empty() {
		s.echoes[len(s.messages)] = reply.Echo
	}
	s.messages = append(s.messages, msg)
}

// isJSONObject reports whether args is one JSON object, the only arguments
// every server accepts back in a conversation.
func isJSONObject(args string) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal([]byte(args), &v) == nil && v != nil
}

// invalidArgsNote tells the model what became of its malformed call in the
// conversation.
const invalidArgsNote = "\n(The conversation shows this call's arguments as {} so the server accepts it; send the call again with one JSON object as its arguments.)"

// runCalls runs one turn's tool calls in order and appends a tool message
// for every call, even those not run, so the conversation stays valid for
// the next request.
func (s *Session) runCalls(ctx context.Context, calls []openai.ToolCall) (stop bool, reason string) {
	for _, call := range calls {
		name, args := call.Function.Name, call.Function.Arguments
		s.Transcript.Record(Event{Kind: "tool_call", Tool: name, CallID: call.ID, Args: argsForRecord(args)})
		var res ToolResult
		switch {
		case ctx.Err() != nil:
			res = ToolResult{Content: "Not run: the user cancelled the task."}
		case stop:
			res = ToolResult{Content: "Not run: the user stopped the task."}
		default:
			res = s.call(ctx, name, args)
			if ctx.Err() != nil {
				res = ToolResult{Content: "Cancelled by the user while it ran; its effects, if any, are unknown."}
			} else if !isJSONObject(args) {
				res.Content += invalidArgsNote
			}
		}
		switch res.Verdict {
		case Stopped:
			stop, reason = true, "You denied "+describeCall(name, args)+" and stopped the task."
		case Denied, Forbidden:
			if s.denied[callKey(name, args)] > MaxDeniedRepeats {
				stop = true
				reason = fmt.Sprintf("The agent asked %d more times for %s after it was denied; the task was stopped.",
					MaxDeniedRepeats+1, describeCall(name, args))
			}
		}
		s.Transcript.Record(Event{Kind: "tool_result", Tool: name, CallID: call.ID, Text: res.Content, Verdict: res.Verdict.String()})
		s.messages = append(s.messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Name: name, Content: res.Content,
		})
	}
	if ctx.Err() != nil {
		return true, "cancelled"
	}
	return stop, reason
}

// call runs one tool call, refusing at once a repeat of a call that was
// already denied: the user is not asked twice for the same thing.
func (s *Session) call(ctx context.Context, name, args string) ToolResult {
	key := callKey(name, args)
	if n, seen := s.denied[key]; seen {
		s.denied[key] = n + 1
		return ToolResult{Verdict: Denied, Content: "This exact call was already denied and the user was not asked again. " +
			"Do not repeat it; continue without it or finish with an explanation."}
	}
	res := s.reg.Call(ctx, name, args)
	if res.Verdict == Denied || res.Verdict == Forbidden {
		s.denied[key] = 0
	}
	if name == "update_plan" && res.Verdict == Ran {
		var a planArgs
		if json.Unmarshal([]byte(args), &a) == nil {
			s.Transcript.Record(Event{Kind: "plan", Text: PlanText(a.Plan)})
		}
	}
	return res
}

// callKey identifies a call independently of JSON whitespace.
func callKey(name, args string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(args)) != nil {
		return name + "\x00" + args
	}
	return name + "\x00" + buf.String()
}

// describeCall names a call for the user: the command line for shell.
func describeCall(name, args string) string {
	if name == "shell" {
		var a shellArgs
		if json.Unmarshal([]byte(args), &a) == nil && len(a.Command) > 0 {
			return "`" + quoteArgv(a.Command) + "`"
		}
	}
	return "the " + name + " call"
}

// argsForRecord keeps valid JSON as is and quotes anything else, so a
// malformed call still lands in the JSON transcript.
func argsForRecord(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	q, _ := json.Marshal(args)
	return q
}

// IsNoModel reports whether err means no model is configured.
func IsNoModel(err error) bool { return errors.Is(err, ErrNoModel) }
