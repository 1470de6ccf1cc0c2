package lsp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestAgentCommandOutcomesVisible: each command the agent runs ends as one
// line in the editor (the command escaped, its exit status, sandboxed or
// not, and the connections Warden's proxy refused): as a $/progress report
// and a log line for a client with progress UI, as window/showMessage for
// one without (eglot). curl -f through a denied destination says the proxy
// refused it, not only "exited 22"; so do warden.exec's outcome and the
// tool result to the model.
func TestAgentCommandOutcomesVisible(t *testing.T) {
	hits := 0
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++; fmt.Fprintln(w, "content") }))
	defer host.Close()
	dest := strings.TrimPrefix(host.URL, "http://")
	curl := []string{"curl", "-fsS", "--noproxy", "", host.URL + "/x"} // 127.0.0.1 is the sandbox's own unless through the proxy
	for _, tc := range []struct {
		name     string
		caps     map[string]any
		progress bool
	}{
		{"progress UI", lsptest.FullCapabilities(), true},
		{"no progress UI (eglot)", lsptest.EglotCapabilities(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			curlArgs, _ := json.Marshal(map[string]any{"command": curl})
			srv := modeltest.New(t,
				modeltest.Turn{Calls: []modeltest.Call{{ID: "fail", Name: "shell", Args: `{"command":["sh","-c","echo \"$0\"; exit 3","a\u001b[2Kb"]}`}}},
				modeltest.Turn{Calls: []modeltest.Call{{ID: "curl", Name: "shell", Args: string(curlArgs)}}},
				modeltest.Turn{Text: "Tests pass."},
			)
			c, _ := startAgentServer(t, srv, tc.caps)
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
			mark := c.Mark()
			if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "run the tests"}); err != nil {
				t.Fatal(err)
			}
			c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: agent: Tests pass."))
			fail := "Warden: agent: `sh -c 'echo \"$0\"; exit 3' 'a\\x1b[2Kb'` exited 3 (sandboxed, "
			refused := "Warden: agent: `curl -fsS --noproxy '' " + host.URL + "/x` exited 22 (sandboxed, "
			proxy := "; proxy: network to " + dest + " denied by the user"
			var reports, logs, shown []string
			for _, m := range c.Messages()[mark:] {
				var p struct {
					Message string `json:"message"`
					Value   struct{ Kind, Message string }
				}
				m.Decode(&p)
				switch {
				case m.Method == "$/progress" && p.Value.Kind == "report":
					reports = append(reports, p.Value.Message)
				case m.Method == "window/logMessage":
					logs = append(logs, p.Message)
				case m.Method == "window/showMessage":
					shown = append(shown, p.Message)
				}
			}
			for _, want := range []string{fail, refused, proxy} {
				if tc.progress && !strings.Contains(strings.Join(reports, "\n"), strings.TrimPrefix(want, "Warden: agent: ")) {
					t.Errorf("progress lacks %q:\n%s", want, strings.Join(reports, "\n"))
				}
				if !strings.Contains(strings.Join(logs, "\n"), want) {
					t.Errorf("log lacks %q:\n%s", want, strings.Join(logs, "\n"))
				}
				if got := strings.Contains(strings.Join(shown, "\n"), want); got == tc.progress {
					t.Errorf("showMessage has %q: %v, want %v (progress UI %v):\n%s", want, got, !tc.progress, tc.progress, strings.Join(shown, "\n"))
				}
			}
			if joined := strings.Join(append(append(reports, logs...), shown...), "\n"); strings.Contains(joined, "\x1b") {
				t.Errorf("a command's escape sequence reached the editor raw:\n%q", joined)
			}
			if got := toolResult(t, srv, "curl"); !strings.Contains(got, "Exit code: 22") || !strings.Contains(got, "[Warden proxy: network to "+dest+" denied by the user") {
				t.Errorf("the model was told %q", got)
			}
		})
	}
	// warden.exec names the refusal too.
	c, _ := execServer(t, nil)
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	got := runExec(t, c, map[string]any{"command": curl})
	if !strings.Contains(got, "exited 22 (sandboxed); proxy: network to "+dest+" denied by the user") {
		t.Errorf("warden.exec ended %q", got)
	}
	if hits != 0 {
		t.Errorf("a refused destination was reached %d times", hits)
	}
}
