package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/config"
)

// These tests replay the streams common OpenAI-compatible servers really
// send (agent/modeltest/replays) through the real client and the real
// agent loop.

type wantCall struct{ id, name, args string }

func TestClientReadsToolCallsAsServersSendThem(t *testing.T) {
	for _, tc := range []struct {
		replay string
		want   []wantCall
	}{
		{"ollama_parallel_index0.sse", []wantCall{{"call_k2vq0h1a", "shell", `{"command":["cat","greet.txt"]}`}, {"call_9x3m2c7d", "read_file", `{"path":"greet.txt"}`}}},
		{"vllm_parallel_index0.sse", []wantCall{{"chatcmpl-tool-5d2a", "shell", `{"command": ["cat", "greet.txt"]}`}, {"chatcmpl-tool-91be", "read_file", `{"path": "greet.txt"}`}}},
		{"llamacpp_arguments_object.sse", []wantCall{{"Zr1c9uJq", "read_file", `{"path":"greet.txt"}`}}},
		{"deepseek_reasoning_toolcall.sse", []wantCall{{"call_00_xR2mTq", "read_file", `{"path":"greet.txt"}`}}},
		{"gemini3_thought_signature.sse", []wantCall{{"function-call-1", "read_file", `{"path":"greet.txt"}`}, {"function-call-2", "list_dir", `{"path":"."}`}}},
		{"llamacpp_plain_json_toolcall.json", []wantCall{{"Lp0aG2", "read_file", `{"path":"greet.txt"}`}}},
	} {
		t.Run(tc.replay, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Replay(tc.replay))
			reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(reply.ToolCalls) != len(tc.want) {
				t.Fatalf("calls = %+v, want %d", reply.ToolCalls, len(tc.want))
			}
			for i, w := range tc.want {
				if c := reply.ToolCalls[i]; c.ID != w.id || c.Function.Name != w.name || c.Function.Arguments != w.args {
					t.Errorf("call %d = %s %s %s, want %s %s %s", i, c.ID, c.Function.Name, c.Function.Arguments, w.id, w.name, w.args)
				}
			}
			if reply.FinishReason != openai.FinishReasonToolCalls {
				t.Errorf("finish = %q", reply.FinishReason)
			}
		})
	}
}

func TestClientShowsTheServersOwnErrorAndDoesNotRetryIt(t *testing.T) {
	for _, tc := range []struct{ replay, want string }{
		{"llamacpp_error_event.sse", "request (9120 tokens) exceeds the available context size (8192 tokens), try increasing it"},
		{"vllm_error_chunk.sse", "This model's maximum context length is 32768 tokens."},
		{"openrouter_finish_error.sse", "Provider disconnected unexpectedly"},
	} {
		t.Run(tc.replay, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Replay(tc.replay), modeltest.Replay(tc.replay))
			_, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "reported an error") {
				t.Fatalf("err = %v, want the server's words %q", err, tc.want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: an error the server reported was retried", n)
			}
		})
	}
}

func TestClientTakesAStreamWithoutFinishReasonAsADrop(t *testing.T) {
	t.Run("cut answer", func(t *testing.T) {
		srv := modeltest.New(t, modeltest.Replay("proxy_cut_text.sse"))
		var shown strings.Builder
		reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, func(s string) { shown.WriteString(s) })
		if err == nil || !strings.Contains(err.Error(), "no finish_reason") {
			t.Fatalf("reply %q, err %v: a cut answer passed for the answer", reply.Content, err)
		}
	})
	t.Run("cut tool call is asked again", func(t *testing.T) {
		srv := modeltest.New(t, modeltest.Replay("proxy_cut_toolcall.sse"), modeltest.Turn{Text: "whole"})
		reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, nil)
		if err != nil || len(reply.ToolCalls) != 0 || reply.Content != "whole" || len(srv.Requests()) != 2 {
			t.Fatalf("reply %+v, err %v after %d requests: a cut call was taken", reply, err, len(srv.Requests()))
		}
	})
}

func TestClientAcceptsPlainJSONAndLongKeepAlives(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Replay("llamacpp_plain_json.json"),
		modeltest.Turn{Raw: modeltest.KeepAlive(400) + modeltest.ReplayText("ollama_reasoning_answer.sse")},
	)
	c := testClient(t, srv.URL)
	var shown strings.Builder
	reply, err := c.Stream(context.Background(), Request{}, func(s string) { shown.WriteString(s) })
	if err != nil || reply.Content != "The file says hello." || shown.String() != reply.Content {
		t.Fatalf("plain JSON: reply %q shown %q, err %v", reply.Content, shown.String(), err)
	}
	var reasoning strings.Builder
	reply, err = c.Stream(context.Background(), Request{OnReasoning: func(s string) { reasoning.WriteString(s) }}, nil)
	if err != nil || reply.Content != "It says hello." {
		t.Fatalf("after 400 keep-alives: reply %q, err %v", reply.Content, err)
	}
	if reasoning.String() != "Okay, the file says hello." || reply.Echo.Reasoning != reasoning.String() || reply.Echo.ReasoningField != "reasoning" {
		t.Errorf("reasoning %q, echo %+v", reasoning.String(), reply.Echo)
	}
}

func TestClientHonoursRetryAfter(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "1"}, Message: "slow down"},
		modeltest.Turn{Text: "done"},
	)
	var notices []string
	start := time.Now()
	reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{OnNotice: func(s string) { notices = append(notices, s) }}, nil)
	if err != nil || reply.Content != "done" {
		t.Fatalf("reply %q, err %v", reply.Content, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v, before the Retry-After of 1 s", d)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "rate limited") || !strings.Contains(notices[0], "retrying in 1 s") {
		t.Errorf("notices = %q", notices)
	}
}

func TestClientDoesNotWaitPastTheRetryAfterCap(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "3600"}, Message: "daily quota used"})
	start := time.Now()
	_, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "asks to wait 3600 s") || !strings.Contains(err.Error(), "daily quota used") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second || len(srv.Requests()) != 1 {
		t.Errorf("waited %v over %d requests", time.Since(start), len(srv.Requests()))
	}
}

func TestClientFallsBackWhenTheServerCannotStreamTools(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Status: http.StatusInternalServerError, Message: "Cannot use tools with stream"},
		modeltest.Replay("llamacpp_plain_json.json"),
		modeltest.Replay("llamacpp_plain_json_toolcall.json"),
	)
	c := testClient(t, srv.URL)
	for range 2 {
		if _, err := c.Stream(context.Background(), Request{Tools: NewRegistry(nil).Definitions()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !reqs[0].Stream || reqs[1].Stream || reqs[2].Stream {
		t.Errorf("stream flags of %d requests: %v", len(reqs), streams(reqs))
	}
}

func streams(reqs []modeltest.Request) []bool {
	var out []bool
	for _, r := range reqs {
		out = append(out, r.Stream)
	}
	return out
}

func TestClientSendsProvidersExtraFields(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: "ok"})
	c, err := NewClient(config.Model{Name: "m", BaseURL: srv.URL, Extra: map[string]any{
		"reasoning_effort": "high", "provider": map[string]any{"order": []string{"deepinfra"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), Request{}, nil); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `"reasoning_effort":"high"`) || !strings.Contains(body, `"provider":{"order":["deepinfra"]}`) {
		t.Errorf("body = %s", body)
	}
	if _, err := NewClient(config.Model{Name: "m", BaseURL: srv.URL, Extra: map[string]any{"messages": "x"}}); err == nil {
		t.Error("an extra field replaced the messages")
	}
}

// wireBody decodes the request as sent, with the fields go-openai's types drop.
func wireBody(t *testing.T, req modeltest.Request) wireRequest {
	t.Helper()
	var w wireRequest
	if err := json.Unmarshal(req.Body, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func assistantTurn(t *testing.T, req modeltest.Request) wireMessage {
	t.Helper()
	for _, m := range wireBody(t, req).Messages {
		if m.Role == "assistant" {
			return m
		}
	}
	t.Fatal("no assistant message in the request")
	return wireMessage{}
}

func greetFixture(t *testing.T, turns ...modeltest.Turn) *fixture {
	f := newFixture(t, turns...)
	os.WriteFile(filepath.Join(f.dir, "greet.txt"), []byte("hello\n"), 0o644)
	return f
}

func TestSessionRunsParallelCallsThatReuseIndexZero(t *testing.T) {
	for _, replay := range []string{"ollama_parallel_index0.sse", "vllm_parallel_index0.sse"} {
		t.Run(replay, func(t *testing.T) {
			f := greetFixture(t, modeltest.Replay(replay), modeltest.Turn{Text: "done"})
			f.runner.results = []CommandResult{{Verdict: Ran, Sandboxed: true, Output: "hello\n"}}
			if _, err := f.sess.Run(context.Background(), "greet"); err != nil {
				t.Fatal(err)
			}
			if len(f.runner.got) != 1 || strings.Join(f.runner.got[0].Argv, " ") != "cat greet.txt" {
				t.Errorf("commands run: %+v", f.runner.got)
			}
			reqs := f.srv.Requests()
			var ids []string
			for _, m := range reqs[1].Messages {
				if m.Role == "tool" {
					ids = append(ids, m.ToolCallID)
				}
			}
			if len(ids) != 2 {
				t.Errorf("tool results for %v, want both calls", ids)
			}
			if got := assistantTurn(t, reqs[1]).ToolCalls; len(got) != 2 || got[1].Function.Name != "read_file" {
				t.Errorf("the conversation holds %+v", got)
			}
		})
	}
}

func TestSessionNeverSendsBackArgumentsTheServerWouldRefuse(t *testing.T) {
	f := greetFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{call("bad", "shell", `{"command":["ls"`)}},
		modeltest.Turn{Text: "done"},
	)
	if _, err := f.sess.Run(context.Background(), "list"); err != nil {
		t.Fatal(err)
	}
	if len(f.runner.got) != 0 {
		t.Errorf("a malformed call ran: %+v", f.runner.got)
	}
	sent := assistantTurn(t, f.srv.Requests()[1]).ToolCalls
	if len(sent) != 1 || sent[0].Function.Arguments != "{}" {
		t.Errorf("history sent back %+v, want the arguments as {}", sent)
	}
	if got := f.toolMessage(t, "bad"); !strings.Contains(got, "not valid JSON") || !strings.Contains(got, "as {}") {
		t.Errorf("tool result %q", got)
	}
}

func TestSessionSendsReasoningAndSignaturesBack(t *testing.T) {
	t.Run("deepseek reasoning_content", func(t *testing.T) {
		f := greetFixture(t, modeltest.Replay("deepseek_reasoning_toolcall.sse"), modeltest.Turn{Text: "It says hello."})
		var shown strings.Builder
		f.sess.cfg.OnReasoning = func(s string) { shown.WriteString(s) }
		res, err := f.sess.Run(context.Background(), "greet")
		if err != nil {
			t.Fatal(err)
		}
		const reasoning = "The user wants the greeting. I should read greet.txt first."
		if m := assistantTurn(t, f.srv.Requests()[1]); m.ReasoningContent != reasoning || m.Reasoning != "" {
			t.Errorf("assistant turn sent back with reasoning_content %q (reasoning %q)", m.ReasoningContent, m.Reasoning)
		}
		if shown.String() != reasoning || strings.Contains(res.Answer, "greet.txt first") {
			t.Errorf("reasoning shown %q, answer %q", shown.String(), res.Answer)
		}
		md, _ := os.ReadFile(f.sess.Transcript.MarkdownPath)
		if !strings.Contains(string(md), "<details><summary>Reasoning</summary>") || !strings.Contains(string(md), reasoning) {
			t.Errorf("transcript has no collapsed reasoning:\n%s", md)
		}
	})
	t.Run("gemini thought_signature", func(t *testing.T) {
		f := greetFixture(t, modeltest.Replay("gemini3_thought_signature.sse"), modeltest.Turn{Text: "done"}, modeltest.Turn{Text: "again"})
		if _, err := f.sess.Run(context.Background(), "greet"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.sess.Run(context.Background(), "and again"); err != nil {
			t.Fatal(err)
		}
		for _, req := range f.srv.Requests()[1:] {
			calls := assistantTurn(t, req).ToolCalls
			if len(calls) != 2 || !strings.Contains(string(calls[0].ExtraContent), `"thought_signature":"CiQB0e2Kb3Vx4sigFIRSTcall=="`) || calls[1].ExtraContent != nil {
				t.Errorf("tool calls sent back: %+v", calls)
			}
		}
	})
}

func TestSessionShowsRetryNotices(t *testing.T) {
	f := greetFixture(t,
		modeltest.Turn{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "1"}},
		modeltest.Turn{Text: "done"},
	)
	if _, err := f.sess.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	f.obs.mu.Lock()
	defer f.obs.mu.Unlock()
	if !contains(f.obs.steps, "rate limited by the model server, retrying in 1 s") {
		t.Errorf("steps = %q", f.obs.steps)
	}
}
