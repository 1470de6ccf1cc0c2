package lsp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// TestEveryMessageStartsWithTheOnePrefix scripts a session in a client
// with progress UI and in one without (eglot): a misspelt setting, an
// agent run with a command that asks and fails, a patch and an answer, a
// warden.exec, warden.status.show and an undo. Every window/showMessage,
// every window/showMessageRequest and every progress title the server
// sends starts "Warden: ", so the user tells Warden's words apart in any
// client.
func TestEveryMessageStartsWithTheOnePrefix(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps map[string]any
	}{{"progress", lsptest.FullCapabilities()}, {"eglot", lsptest.EglotCapabilities()}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t,
				modeltest.Turn{Calls: []modeltest.Call{{ID: "fail", Name: "shell", Args: `{"command":["sh","-c","echo no; exit 3"],"justification":"see it fail"}`}}},
				modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"}`}}},
				modeltest.Turn{Text: "Done, notes added."},
			)
			c := lsptest.Start(t, lsptest.Options{Env: []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model"}})
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
			c.OnRequest("workspace/applyEdit", lsptest.Applied(true))
			c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) {
				return wire.ShowDocumentResult{Success: true}, nil
			})
			c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.RPCError) { return nil, nil })
			c.InitializeWith(map[string]any{
				"processId":             os.Getpid(),
				"rootUri":               textdoc.PathToURI(c.Dir),
				"capabilities":          tc.caps,
				"initializationOptions": map[string]any{"approvalPolicy": "untrusted", "sandboxMod": "read-only"},
				"workspaceFolders":      []map[string]any{{"uri": textdoc.PathToURI(c.Dir), "name": "ws"}},
			})

			mark := c.Mark()
			startJob(t, c, "warden.agent.run", map[string]any{"instruction": "add notes"})
			c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("agent: Done, notes added."))
			mark = c.Mark()
			startJob(t, c, "warden.exec", map[string]any{"command": []string{"sh", "-c", "exit 4"}})
			c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("exited 4"))
			mark = c.Mark()
			startJob(t, c, "warden.status.show")
			c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("approval untrusted"))
			mark = c.Mark()
			startJob(t, c, "warden.undo")
			c.WaitFrom(mark, "window/showMessage", func(m lsptest.Message) bool {
				return lsptest.MessageContains("undid")(m) || lsptest.MessageContains("nothing to undo")(m)
			})

			kinds := map[string]int{}
			for _, m := range c.Messages() {
				if m.Dir != lsptest.Received {
					continue
				}
				var p struct {
					Message string `json:"message"`
					Value   struct {
						Kind  string `json:"kind"`
						Title string `json:"title"`
					} `json:"value"`
				}
				m.Decode(&p)
				text := p.Message
				switch {
				case m.Method == "window/showMessage" || m.Method == "window/showMessageRequest":
				case m.Method == "$/progress" && p.Value.Kind == "begin":
					text = p.Value.Title
				default:
					continue
				}
				kinds[m.Method]++
				if !strings.HasPrefix(text, "Warden: ") {
					t.Errorf("%s does not start with \"Warden: \": %q", m.Method, text)
				}
			}
			if kinds["window/showMessage"] < 3 || kinds["window/showMessageRequest"] < 2 {
				t.Errorf("the session showed too little to check: %v", kinds)
			}
			if tc.name == "progress" && kinds["$/progress"] < 2 {
				t.Errorf("the session sent too few progress titles: %v", kinds)
			}
		})
	}
}
