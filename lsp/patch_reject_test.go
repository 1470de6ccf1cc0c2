package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/wire"
)

// TestRejectedPatchEndsAtOnce: when Warden's review answers that the user
// rejected every change (as the Neovim plugin does: applied false, each
// change "rejected"), no didChange is coming, and the agent's next turn
// starts at once rather than after the wait for the editor's edits (2 s
// in Neovim 0.12 before). The twin: an accepted change is still read back
// from the document.
func TestRejectedPatchEndsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reject bool
	}{{"rejected", true}, {"accepted", false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t,
				modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+uno\n*** End Patch\n"}`}}},
				modeltest.Turn{Text: "next turn"},
			)
			c, ed := startAgentServer(t, srv, lsptest.FullCapabilities())
			write(t, c.Dir, map[string]string{"a.txt": "one\n"})
			uri := ed.open("a.txt", "one\n")
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
			answered := make(chan time.Time, 1)
			c.OnRequest("workspace/applyEdit", func(json.RawMessage) (any, *lsptest.RPCError) {
				defer func() { answered <- time.Now() }()
				if !tc.reject {
					go c.Change(uri, lsptest.Edit{Text: "uno\n"})
					return wire.ApplyWorkspaceEditResult{Applied: true}, nil
				}
				return wire.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the user accepted 0 of 1 change; rejected: a.txt",
					Warden: &wire.ReviewOutcome{Changes: []wire.ReviewedChange{{URI: uri, Outcome: "rejected"}}}}, nil
			})
			mark := c.Mark()
			startJob(t, c, "warden.agent.run", map[string]any{"instruction": "spell it in Spanish"})
			if msg := progressEnd(t, c, mark); msg != "done" {
				t.Fatalf("progress ended with %q", msg)
			}
			ended := time.Now()
			took := ended.Sub(<-answered)
			t.Logf("from the editor's answer to the end of the run: %v", took)
			if took > time.Second {
				t.Errorf("the run ended %v after the editor answered; want at once", took)
			}
			result := toolResult(t, srv, "patch")
			if tc.reject == strings.HasPrefix(result, "Success.") || !strings.Contains(result, "a.txt") {
				t.Errorf("the model was told: %s", result)
			}
		})
	}
}
