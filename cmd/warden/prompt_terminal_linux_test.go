package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
)

// TestPromptEscapeTerminalResetsAttributes: text printed before a prompt
// (the model's streamed answer) may leave the terminal concealing text or in
// the line-drawing character set; the prompt resets both before it is
// drawn on a terminal, and writes no escape codes when it is not one (twin).
func TestPromptEscapeTerminalResetsAttributes(t *testing.T) {
	master, slave := openPTY(t)
	req := approvals.PromptRequest{Kind: approvals.PromptCommand, Argv: []string{"touch", "x"}, Cwd: "/w"}
	p := &terminalPrompter{in: bufio.NewReader(strings.NewReader("4\n")), out: slave}
	if d, _ := p.Prompt(context.Background(), req); d != approvals.Denied {
		t.Fatalf("answer 4: %s, want denied", d)
	}
	got := make(chan string, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for !strings.Contains(string(all), "Choose 1-") {
			n, err := master.Read(buf)
			if err != nil {
				break
			}
			all = append(all, buf[:n]...)
		}
		got <- string(all)
	}()
	select {
	case s := <-got:
		if !strings.HasPrefix(s, terminalReset) || !strings.Contains(s, "Warden: run `touch x`?") {
			t.Errorf("terminal output %q does not start with the reset %q", s, terminalReset)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing written to the terminal")
	}

	var buf strings.Builder
	p = &terminalPrompter{in: bufio.NewReader(strings.NewReader("4\n")), out: &buf}
	p.Prompt(context.Background(), req)
	if strings.Contains(buf.String(), "\x1b") || !strings.Contains(buf.String(), "Warden: run `touch x`?") {
		t.Errorf("non-terminal output %q", buf.String())
	}
}

// TestTerminalReaskOnPTY drives the real binary on a terminal: an answer it
// does not understand is asked again (the command neither runs nor is
// refused yet); the next answer decides. The twin answers at once.
func TestTerminalReaskOnPTY(t *testing.T) {
	for _, c := range []struct {
		answer  string
		code    int
		created bool
		asks    int
	}{
		{"what\n1", 0, true, 2},                // re-asked, then Allow once
		{"what\nhuh\n", exitRefused, false, 3}, // re-asked twice, then Enter: Deny
		{"1", 0, true, 1},                      // twin
	} {
		stderr, code, ws := promptOnTerminal(t, c.answer, "touch", "file")
		_, statErr := os.Stat(filepath.Join(ws, "file"))
		if code != c.code || (statErr == nil) != c.created || strings.Count(stderr, "Choose 1-") != c.asks {
			t.Errorf("answer %q: exit %d (want %d), created %v (want %v), asked %d times (want %d)\n%s", c.answer, code, c.code, statErr == nil, c.created, strings.Count(stderr, "Choose 1-"), c.asks, stderr)
		}
		if c.asks > 1 && !strings.Contains(stderr, `"what" is not one of the choices`) {
			t.Errorf("answer %q: no explanation of the re-ask:\n%s", c.answer, stderr)
		}
	}
}
