package lsp_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// The editor's dialog for the agent's read of a secret file tells what
// happens: Warden reads ~/.env itself for the model, no sandbox is
// involved, high risk as an error-type message with Deny first. Denied,
// the file's content never reaches the model.
func TestAgentSecretReadDialogInTheEditor(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "env", Name: "read_file", Args: `{"path":".env"}`}}},
		modeltest.Turn{Text: "done"},
	)
	c, _ := startHomeAgentServer(t, srv)
	write(t, c.Dir, map[string]string{".env": "TOKEN=SECRET-IN-THE-DOTENV\n"})
	var mu sync.Mutex
	var dialogs []protocol.ShowMessageRequestParams
	deny := lsptest.Choose("Deny")
	c.OnRequest("window/showMessageRequest", func(params json.RawMessage) (any, *lsptest.RPCError) {
		var p protocol.ShowMessageRequestParams
		json.Unmarshal(params, &p)
		mu.Lock()
		dialogs = append(dialogs, p)
		mu.Unlock()
		return deny(params)
	})
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "read the env"}); err != nil {
		t.Fatal(err)
	}
	if msg := progressEnd(t, c, mark); msg != "done" {
		t.Fatalf("progress ended with %q", msg)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) != 1 {
		t.Fatalf("%d dialogs, want 1", len(dialogs))
	}
	d := dialogs[0]
	if first, _, _ := strings.Cut(d.Message, "\n"); first != "Warden: let the agent read ~/.env (a secret file)?" {
		t.Errorf("heading %q", first)
	}
	if !strings.Contains(d.Message, "\nSandbox: not involved: Warden reads this file itself and hands its text to the model") || strings.Contains(d.Message, "NOT sandboxed") {
		t.Errorf("sandbox line:\n%s", d.Message)
	}
	var titles []string
	for _, a := range d.Actions {
		titles = append(titles, a.Title)
	}
	if d.Type != protocol.MessageTypeError || strings.Join(titles, "|") != "Deny|Allow once|Deny and stop" {
		t.Errorf("type %v, actions %q", d.Type, titles)
	}
	if got := toolResult(t, srv, "env"); strings.Contains(got, "SECRET-IN-THE-DOTENV") || !strings.Contains(got, "not approved") {
		t.Errorf("read_file after a denial: %q", got)
	}
}
