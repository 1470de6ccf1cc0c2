package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// A job's progress has begun before the job asks anything: Neovim blocks
// while it shows a dialog, so a begin sent after the dialog would leave the
// status line empty while the user decides. The client answers the token
// request slowly (the attack on the ordering) or at once (the twin); both
// must give answer, begin, then the dialog, and the end last.
func TestJobProgressBeginsBeforeItsFirstDialog(t *testing.T) {
	for _, delay := range []time.Duration{300 * time.Millisecond, 0} {
		t.Run(delay.String(), func(t *testing.T) {
			c := lsptest.Start(t, lsptest.Options{Bin: lsptest.TestBinary(t)})
			c.Initialize(map[string]any{"approvalPolicy": "untrusted"})
			c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.RPCError) {
				time.Sleep(delay)
				return nil, nil
			})
			c.OnRequest("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.RPCError) {
				return nil, nil // dismissed: a denial
			})
			mark := c.Mark()
			if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"touch", "made-by-test"}}); err != nil {
				t.Fatal(err)
			}
			c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
			var order []string
			for _, m := range c.Messages()[mark:] {
				switch {
				case m.Method == "window/workDoneProgress/create" && m.Dir == lsptest.Received:
					order = append(order, "create")
				case m.Method == "window/showMessageRequest" && m.Dir == lsptest.Received:
					order = append(order, "dialog")
				case m.Method == "$/progress":
					var p struct {
						Value struct {
							Kind string `json:"kind"`
						} `json:"value"`
					}
					json.Unmarshal(m.Params, &p)
					if p.Value.Kind != "report" {
						order = append(order, p.Value.Kind)
					}
				}
			}
			want := []string{"create", "begin", "dialog", "end"}
			if len(order) != len(want) {
				t.Fatalf("messages %v, want %v", order, want)
			}
			for i := range want {
				if order[i] != want[i] {
					t.Fatalf("messages %v, want %v", order, want)
				}
			}
		})
	}
}

// A job does not wait for the editor's answer to its progress token: a
// command the policy allows runs and its result is shown while the editor
// takes its time to answer, and what the job reported meanwhile follows
// the begin, in order, with the end last. Without progress UI in the
// status line for a moment, nothing is lost.
func TestJobRunsWhileTheEditorAnswersTheProgressToken(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{Bin: lsptest.TestBinary(t)})
	c.Initialize(map[string]any{"approvalPolicy": "on-request", "sandboxMode": "workspace-write"})
	answering := make(chan time.Time, 1)
	c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.RPCError) {
		time.Sleep(300 * time.Millisecond)
		answering <- time.Now()
		return nil, nil
	})
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"/bin/true"}}); err != nil {
		t.Fatal(err)
	}
	result := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("`/bin/true` exited 0"))
	c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
	if at := <-answering; !result.At.Before(at) {
		t.Errorf("the result came %v after the editor answered the token request: the job waited for it", result.At.Sub(at))
	}
	var order []string
	for _, m := range c.Messages()[mark:] {
		switch {
		case m.Dir == lsptest.Sent && m.Method == "" && m.Result != nil:
			order = append(order, "answer")
		case m.Method == "$/progress":
			var p struct {
				Value struct{ Kind, Message string } `json:"value"`
			}
			m.Decode(&p)
			order = append(order, strings.TrimSpace(p.Value.Kind+" "+p.Value.Message))
		}
	}
	want := []string{"answer", "begin", "report checking policy: /bin/true", "end"}
	if len(order) < len(want) || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] || !strings.HasPrefix(order[len(order)-1], want[3]) {
		t.Errorf("messages %q, want %q first and the end last", order, want)
	}
}
