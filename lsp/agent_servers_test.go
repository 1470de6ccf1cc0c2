package lsp_test

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// The editor's side of the servers' own shapes (agent/modeltest/replays):
// a server's error reaches the user in its words; reasoning shows as
// thinking, never as the answer.

func TestAgentShowsTheModelServersOwnError(t *testing.T) {
	srv := modeltest.New(t, modeltest.Replay("llamacpp_error_event.sse"))
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "summarise"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	if !strings.Contains(c.Trace(), "exceeds the available context size (8192 tokens), try increasing it") {
		t.Errorf("the server's words never reached the editor:\n%s", c.Trace())
	}
}

func TestAgentShowsReasoningAsThinkingNotAsTheAnswer(t *testing.T) {
	srv := modeltest.New(t, modeltest.Replay("ollama_reasoning_answer.sse"))
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "what does it say"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	trace := c.Trace()
	if !strings.Contains(trace, "Model: thinking") {
		t.Errorf("no thinking progress:\n%s", trace)
	}
	if !strings.Contains(trace, "Warden: agent: It says hello.") || strings.Contains(trace, "Okay, the file") {
		t.Errorf("the answer, and only the answer, should be shown:\n%s", trace)
	}
}
