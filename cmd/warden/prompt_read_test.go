package main

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
)

// On the terminal a secret read's dialog says what happens (Warden reads the
// file itself; no sandbox is involved), lists Deny first, and each answer
// means what it says: 1 and Enter deny, 2 allows once, 3 stops.
func TestTerminalReadPrompt(t *testing.T) {
	req := approvals.PromptRequest{Kind: approvals.PromptRead, Argv: []string{"read_file", "/home/u/.env"}, Files: []string{"~/.env"}, Cwd: "/home/u",
		Reason: "read_file would send this file's content to the model",
		Risk:   risk.Risk{Level: risk.High, Summary: "Reads secrets: ~/.env", Facts: []string{"reads secrets: ~/.env"}}}
	for input, want := range map[string]approvals.ReviewDecision{"1\n": approvals.Denied, "\n": approvals.Denied, "2\n": approvals.Approved, "y\n": approvals.Approved, "3\n": approvals.Abort} {
		out := &syncWriter{}
		p := &terminalPrompter{in: bufio.NewReader(strings.NewReader(input)), out: out}
		d, err := p.Prompt(context.Background(), req)
		if err != nil || d != want {
			t.Errorf("answer %q: %v %v, want %v", input, d, err, want)
		}
		text := out.String()
		for _, line := range []string{"Warden: let the agent read ~/.env (a secret file)?", "Sandbox: not involved: Warden reads this file itself and hands its text to the model",
			"  1) Deny\n  2) Allow once\n  3) Deny and stop\n"} {
			if !strings.Contains(text, line) {
				t.Errorf("terminal lacks %q:\n%s", line, text)
			}
		}
		if strings.Contains(text, "NOT sandboxed") || strings.Contains(text, "run `") {
			t.Errorf("terminal says something runs:\n%s", text)
		}
	}
}
