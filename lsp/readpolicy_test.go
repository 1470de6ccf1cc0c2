package lsp_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// startHomeAgentServer runs warden serve with the workspace at $HOME (an
// editor opened in ~), against the fake model.
func startHomeAgentServer(t *testing.T, srv *modeltest.Server) (*lsptest.Client, *fakeEditor) {
	t.Helper()
	home := t.TempDir()
	c := lsptest.Start(t, lsptest.Options{Dir: home, Env: []string{
		"HOME=" + home, "OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model",
	}})
	c.InitializeWith(map[string]any{
		"processId": 0, "rootUri": textdoc.PathToURI(home), "capabilities": lsptest.FullCapabilities(),
		"workspaceFolders": []map[string]any{{"uri": textdoc.PathToURI(home), "name": "home"}},
	})
	c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) {
		return wire.ShowDocumentResult{Success: true}, nil
	})
	return c, newFakeEditor(t, c)
}

// With the workspace at ~, an open buffer of the SSH key reaches the model
// neither as read_file's answer (the buffer, unsaved edits and all) nor as
// the selection of an Explain request; list_dir of ~ names the store as
// hidden. Twins: an ordinary buffer is read, and its selection is sent.
func TestAgentBuffersFollowTheReadPolicy(t *testing.T) {
	const bufferKey = "UNSAVED-KEY-IN-THE-BUFFER"
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{
			{ID: "key", Name: "read_file", Args: `{"path":".ssh/id_rsa"}`},
			{ID: "notes", Name: "read_file", Args: `{"path":"notes.txt"}`},
			{ID: "ls", Name: "list_dir", Args: `{"path":"."}`},
		}},
		modeltest.Turn{Text: "done"},
		modeltest.Turn{Text: "explained"},
	)
	c, ed := startHomeAgentServer(t, srv)
	write(t, c.Dir, map[string]string{".ssh/id_rsa": "KEY ON DISK\n", "notes.txt": "on disk\n"})
	keyURI := ed.open(".ssh/id_rsa", "KEY ON DISK\n")
	ed.type_(keyURI, bufferKey+"\n")
	notesURI := ed.open("notes.txt", "unsaved notes\n")
	ed.type_(notesURI, "unsaved notes\n")

	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "look around"}); err != nil {
		t.Fatal(err)
	}
	if msg := progressEnd(t, c, mark); msg != "done" {
		t.Fatalf("progress ended with %q", msg)
	}
	if got := toolResult(t, srv, "key"); !strings.Contains(got, "hidden by the read policy") {
		t.Errorf("read_file of the key's buffer: %q", got)
	}
	if got := toolResult(t, srv, "notes"); !strings.Contains(got, "unsaved notes") {
		t.Errorf("twin: read_file of an ordinary buffer: %q", got)
	}
	if got := toolResult(t, srv, "ls"); !strings.Contains(got, ".ssh/ [hidden by the read policy]") || strings.Contains(got, "id_rsa") {
		t.Errorf("list_dir of ~:\n%s", got)
	}

	line := protocol.Range{Start: protocol.Position{Line: 0}, End: protocol.Position{Line: 0, Character: 3}}
	mark = c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"mode": "explain", "uri": keyURI, "range": line}); err != nil {
		t.Fatal(err)
	}
	if msg := progressEnd(t, c, mark); !strings.Contains(msg, "was not sent to the model") || !strings.Contains(msg, "read_allow") {
		t.Errorf("explaining the key ended with %q", msg)
	}
	mark = c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"mode": "explain", "uri": notesURI, "range": line}); err != nil {
		t.Fatal(err)
	}
	if msg := progressEnd(t, c, mark); msg != "done" {
		t.Errorf("twin: explaining notes ended with %q", msg)
	}
	reqs := srv.Requests()
	for _, req := range reqs {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, bufferKey) || strings.Contains(m.Content, "KEY ON DISK") {
				t.Errorf("the key reached the model in a %s message: %q", m.Role, m.Content)
			}
		}
	}
	if last := reqs[len(reqs)-1].Messages[1].Content; !strings.Contains(last, "unsaved notes") || !strings.Contains(last, filepath.Join(c.Dir, "notes.txt")) {
		t.Errorf("twin: the notes selection was not sent: %q", last)
	}
}
