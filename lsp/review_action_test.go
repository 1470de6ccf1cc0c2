package lsp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// TestPatchDialogNamesTheReview: in an editor that reviews a patch before
// it lands (change annotations, or Warden's own plugin), the patch dialog's
// approving action is "Review…", since choosing it opens the review; an
// answer of the contract's older "Allow once" still approves. In eglot,
// whose approval writes the patch, it stays "Allow once".
func TestPatchDialogNamesTheReview(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   map[string]any
		answer string
		want   string
	}{
		{"annotations", lsptest.FullCapabilities(), "Review…", "Review…|Allow for session|Deny|Deny and stop"},
		{"old title", lsptest.FullCapabilities(), "Allow once", "Review…|Allow for session|Deny|Deny and stop"},
		{"eglot", lsptest.EglotCapabilities(), "Allow once", "Allow once|Allow for session|Deny|Deny and stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t,
				modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+uno\n*** End Patch\n"}`}}},
				modeltest.Turn{Text: "done"},
			)
			c := lsptest.Start(t, lsptest.Options{Env: []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model"}})
			dialogs := make(chan json.RawMessage, 2)
			// The answer is sent as a client written against the contract
			// would, whatever the dialog offered.
			c.OnRequest("window/showMessageRequest", lsptest.Record(dialogs, func(json.RawMessage) (any, *lsptest.RPCError) {
				return protocol.MessageActionItem{Title: tc.answer}, nil
			}))
			c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) { return wire.ShowDocumentResult{Success: true}, nil })
			c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.RPCError) { return nil, nil })
			c.InitializeWith(map[string]any{
				"processId":             os.Getpid(),
				"rootUri":               textdoc.PathToURI(c.Dir),
				"capabilities":          tc.caps,
				"initializationOptions": map[string]any{"approvalPolicy": "untrusted"},
				"workspaceFolders":      []map[string]any{{"uri": textdoc.PathToURI(c.Dir), "name": "ws"}},
			})
			ed := newFakeEditor(t, c)
			ed.eglot = tc.name == "eglot"
			write(t, c.Dir, map[string]string{"a.txt": "one\n"})
			ed.open("a.txt", "one\n")
			mark := c.Mark()
			startJob(t, c, "warden.agent.run", map[string]any{"instruction": "spell it in Spanish"})
			c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("agent: done"))
			var d protocol.ShowMessageRequestParams
			json.Unmarshal(<-dialogs, &d)
			var titles []string
			for _, a := range d.Actions {
				titles = append(titles, a.Title)
			}
			if got := strings.Join(titles, "|"); got != tc.want {
				t.Errorf("actions %s, want %s", got, tc.want)
			}
			if result := toolResult(t, srv, "patch"); !strings.HasPrefix(result, "Success.") {
				t.Errorf("answering %q did not approve: %s", tc.answer, result)
			}
		})
	}
}
