package lsp_test

import (
	"encoding/json"
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
