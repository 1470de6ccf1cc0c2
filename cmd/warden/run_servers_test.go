package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// `warden run` against replays of what common OpenAI-compatible servers
// really send (agent/modeltest/replays): what the user sees and the exit
// status.

func greetDir(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
	return dir
}

func TestRunParallelCallsThatReuseIndexZero(t *testing.T) {
	srv := modeltest.New(t, modeltest.Replay("ollama_parallel_index0.sse"), modeltest.Turn{Text: "It says hello."})
	stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "read greet.txt")
	if code != 0 || stdout != "It says hello.\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := toolResult(srv, "call_k2vq0h1a"); !strings.Contains(got, "hello") || !strings.Contains(got, "Exit code: 0") {
		t.Errorf("shell result %q", got)
	}
	if got := toolResult(srv, "call_9x3m2c7d"); !strings.Contains(got, "hello") {
		t.Errorf("read_file result %q", got)
	}
}

func TestRunShowsTheServersOwnError(t *testing.T) {
	for _, tc := range []struct{ replay, want string }{
		{"llamacpp_error_event.sse", "request (9120 tokens) exceeds the available context size (8192 tokens), try increasing it"},
		{"openrouter_finish_error.sse", "Provider disconnected unexpectedly"},
		{"vllm_error_chunk.sse", "This model's maximum context length is 32768 tokens."},
	} {
		t.Run(tc.replay, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Replay(tc.replay), modeltest.Replay(tc.replay))
			stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "summarise")
			if code != 1 || !strings.Contains(stderr, "warden run: the model server "+srv.URL+" reported an error: "+tc.want) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: the server's error was retried", n)
			}
		})
	}
}

func TestRunTakesAStreamWithoutFinishReasonAsADrop(t *testing.T) {
	srv := modeltest.New(t, modeltest.Replay("proxy_cut_text.sse"))
	stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "finish")
	if code != 1 || !strings.Contains(stderr, "no finish_reason") {
		t.Fatalf("a cut answer passed for the answer: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunWaitsAsRetryAfterAsksAndSaysSo(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "1"}, Message: "Rate limit reached for requests"},
		modeltest.Turn{Text: "done"},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "x")
	if code != 0 || stdout != "done\n" || !strings.Contains(stderr, "rate limited by the model server, retrying in 1 s") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunShowsReasoningApartFromTheAnswer(t *testing.T) {
	srv := modeltest.New(t, modeltest.Replay("deepseek_reasoning_toolcall.sse"), modeltest.Turn{Text: "It says hello."})
	stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "greet")
	if code != 0 || stdout != "It says hello.\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "› thinking: The user wants the greeting. I should read greet.txt first.\n") {
		t.Errorf("reasoning not shown on stderr:\n%s", stderr)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, `"reasoning_content":"The user wants the greeting. I should read greet.txt first."`) {
		t.Errorf("the reasoning did not travel back: %s", body)
	}
}

func TestRunFallsBackWhenTheServerCannotStreamTools(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Status: http.StatusInternalServerError, Message: "Cannot use tools with stream"},
		modeltest.Replay("llamacpp_plain_json_toolcall.json"),
		modeltest.Replay("llamacpp_plain_json.json"),
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, greetDir(t), "--deny", "read it")
	if code != 0 || stdout != "The file says hello.\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := toolResult(srv, "Lp0aG2"); !strings.Contains(got, "hello") {
		t.Errorf("read_file result %q", got)
	}
}
