package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
)

// TestTerminalReaskUnderstoodAnswers: an answer the prompter does not
// understand is asked again instead of denying; Enter takes the default,
// Deny; y is accepted only when Allow once is listed, and the choices line
// says so.
func TestTerminalReaskUnderstoodAnswers(t *testing.T) {
	low := approvals.PromptRequest{Kind: approvals.PromptCommand, Argv: []string{"touch", "x"}, Cwd: "/w"}
	high := low
	high.Risk = risk.Risk{Level: risk.High, Summary: "Reads secrets: .env", Facts: []string{"reads secrets: .env"}}
	cases := []struct {
		name  string
		req   approvals.PromptRequest
		input string
		want  approvals.ReviewDecision
		asks  int  // how many times the choices line is shown
		err   bool // the denial comes with an error (no answer)
	}{
		// attacks on the old behaviour: a typo used to deny silently
		{"typo then allow", low, "yse\ny\n", approvals.Approved, 2, false},
		{"out of range then allow", low, "9\n1\n", approvals.Approved, 2, false},
		{"word then enter", low, "sure\n\n", approvals.Denied, 2, false},
		{"high risk: typo then 2 (Allow once)", high, "allow\n2\n", approvals.Approved, 2, false},
		{"high risk: 4 is not listed", high, "4\n3\n", approvals.Abort, 2, false},
		{"garbage forever", low, strings.Repeat("what\n", 10), approvals.Denied, maxAsks, true},
		{"garbage then end of input", low, "what\n", approvals.Denied, 2, true},
		// twins: understood answers are taken at once
		{"enter is deny", low, "\n", approvals.Denied, 1, false},
		{"high risk: enter is deny", high, "\n", approvals.Denied, 1, false},
		{"high risk: 1 is deny", high, "1\n", approvals.Denied, 1, false},
		{"y", low, "y\n", approvals.Approved, 1, false},
		{"YES", low, "YES\n", approvals.Approved, 1, false},
		{"n", low, "n\n", approvals.Denied, 1, false},
		{"high risk: y", high, "y\n", approvals.Approved, 1, false},
		{"end of input", low, "", approvals.Denied, 1, true},
	}
	for _, c := range cases {
		var out strings.Builder
		p := &terminalPrompter{in: bufio.NewReader(strings.NewReader(c.input)), out: &out}
		d, err := p.Prompt(context.Background(), c.req)
		asks := strings.Count(out.String(), "Choose 1-")
		if d != c.want || asks != c.asks || (err != nil) != c.err {
			t.Errorf("%s: decision %s, asked %d times, err %v; want %s, %d, err %v\n%s", c.name, d, asks, err, c.want, c.asks, c.err, out.String())
		}
		if c.asks > 1 && !strings.Contains(out.String(), "is not one of the choices") {
			t.Errorf("%s: the re-ask does not say why:\n%s", c.name, out.String())
		}
		if !strings.Contains(out.String(), "y (Allow once), n (Deny) [Enter: Deny]: ") {
			t.Errorf("%s: the choices line does not show y, n and the default:\n%s", c.name, out.String())
		}
	}
}

// TestTerminalReaskTimeout: no answer within the timeout denies, with an
// error; an answer in time is taken (twin).
func TestTerminalReaskTimeout(t *testing.T) {
	req := approvals.PromptRequest{Kind: approvals.PromptCommand, Argv: []string{"touch", "x"}, Cwd: "/w"}
	r, w := io.Pipe()
	defer w.Close()
	var out strings.Builder
	p := &terminalPrompter{in: bufio.NewReader(r), out: &out, timeout: 200 * time.Millisecond}
	start := time.Now()
	d, err := p.Prompt(context.Background(), req)
	if d != approvals.Denied || err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("silent terminal: %s %v after %s, want a denial at the timeout", d, err, time.Since(start))
	}
	r2, w2 := io.Pipe()
	p = &terminalPrompter{in: bufio.NewReader(r2), out: &out, timeout: 5 * time.Second}
	go func() { w2.Write([]byte("nope\n")); time.Sleep(50 * time.Millisecond); w2.Write([]byte("1\n")) }()
	if d, err := p.Prompt(context.Background(), req); d != approvals.Approved || err != nil {
		t.Errorf("answer after a re-ask: %s %v, want approved", d, err)
	}
}
