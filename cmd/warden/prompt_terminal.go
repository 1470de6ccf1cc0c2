package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
)

// terminalPrompter asks on the terminal: the prompt goes to out (stderr, so
// the command's own output stays clean), the answer comes from in. An empty
// line takes the default, Deny; an answer it does not understand is asked
// again (up to maxAsks times); end of input or the timeout is a denial.
//
// Prompts are put one at a time: a command's connections to several hosts
// ask concurrently, and two questions interleaved on one terminal would
// take one's answer for the other. One reader goroutine owns the input, so
// a line typed after a prompt timed out goes to the next prompt, not to a
// reader nobody waits for, and nothing is read while no prompt is open.
type terminalPrompter struct {
	in      *bufio.Reader
	out     io.Writer
	timeout time.Duration

	mu        sync.Mutex // one prompt at a time
	startRead sync.Once
	want      chan struct{} // asks the reader for one line
	lines     chan lineRead
	reading   bool // a line was asked for and not yet taken
}

type lineRead struct {
	s   string
	err error
}

// maxAsks bounds how often one prompt is put: input that never makes sense
// (a pipe of garbage) ends in a denial, not a loop.
const maxAsks = 5

// Prompt implements approvals.Prompter.
func (p *terminalPrompter) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Err() != nil {
		return approvals.Denied, fmt.Errorf("no answer on the terminal: %w", ctx.Err())
	}
	actions := req.Actions()
	if isTerminalWriter(p.out) {
		// Text printed before the prompt (the model's streamed answer, a
		// command's output) may have left the terminal concealing text,
		// drawing it in the background colour or in the line-drawing
		// character set: reset that so the prompt is seen as written.
		io.WriteString(p.out, terminalReset)
	}
	fmt.Fprintf(p.out, "\n%s\n\n", req.Message())
	for i, a := range actions {
		fmt.Fprintf(p.out, "  %d) %s\n", i+1, a.Title)
	}
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	for ask := 1; ; ask++ {
		fmt.Fprint(p.out, choicesLine(actions))
		s, err := p.readLine(ctx)
		if err != nil {
			fmt.Fprintln(p.out)
			return approvals.Denied, fmt.Errorf("no answer on the terminal: %w", err)
		}
		s = strings.TrimSpace(s)
		if d, ok := chooseAction(actions, s); ok {
			return d, nil
		}
		if ask == maxAsks {
			return approvals.Denied, fmt.Errorf("no valid answer after %d tries, so it was denied", maxAsks)
		}
		fmt.Fprintf(p.out, "%s is not one of the choices; type a number from 1 to %d%s.\n", command.EscapeText(strconv.Quote(truncate(s, 40))), len(actions), letterHint(actions))
	}
}

// readLine reads one line, giving up when ctx ends. A line asked for and
// not taken in time (a timed-out prompt) is kept for the next prompt; no
// line is read unless a prompt asks for one. Callers hold p.mu.
func (p *terminalPrompter) readLine(ctx context.Context) (string, error) {
	p.startRead.Do(func() {
		p.want = make(chan struct{})
		p.lines = make(chan lineRead)
		go func() {
			for range p.want {
				s, err := p.in.ReadString('\n')
				if err != nil && s == "" {
					p.lines <- lineRead{err: err}
					continue
				}
				p.lines <- lineRead{s: s}
			}
		}()
	})
	if !p.reading {
		p.want <- struct{}{}
		p.reading = true
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l := <-p.lines:
		p.reading = false
		return l.s, l.err
	}
}

// choicesLine is the question under the list: every answer accepted is
// shown, and the default (Enter) is Deny.
func choicesLine(actions []approvals.Action) string {
	return fmt.Sprintf("Choose 1-%d%s [Enter: %s]: ", len(actions), letterHint(actions), approvals.TitleDeny)
}

// letterHint shows the letters accepted for the actions listed: y for
// Allow once, n for Deny.
func letterHint(actions []approvals.Action) string {
	var hints []string
	if actionIndex(actions, approvals.Approved) > 0 {
		hints = append(hints, "y ("+approvals.TitleAllowOnce+")")
	}
	if actionIndex(actions, approvals.Denied) > 0 {
		hints = append(hints, "n ("+approvals.TitleDeny+")")
	}
	if len(hints) == 0 {
		return ""
	}
	return ", " + strings.Join(hints, ", ")
}

// actionIndex is the 1-based position of the action with decision d, or 0.
func actionIndex(actions []approvals.Action, d approvals.ReviewDecision) int {
	for i, a := range actions {
		if a.Decision == d {
			return i + 1
		}
	}
	return 0
}

// chooseAction reads an answer: a number from the list, y (Allow once) or
// n (Deny) when those are listed, or an empty line (Deny). ok is false for
// anything else, which is asked again.
func chooseAction(actions []approvals.Action, s string) (d approvals.ReviewDecision, ok bool) {
	switch strings.ToLower(s) {
	case "":
		return approvals.Denied, true
	case "y", "yes":
		return approvals.Approved, actionIndex(actions, approvals.Approved) > 0
	case "n", "no":
		return approvals.Denied, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > len(actions) {
		return approvals.Denied, false
	}
	return actions[n-1].Decision, true
}

// truncate shortens s to n characters for an error line.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// fixedPrompter answers every prompt the same way: --yes (allow once) or
// --deny.
type fixedPrompter struct {
	decision approvals.ReviewDecision
	out      io.Writer
}

func (p fixedPrompter) Prompt(_ context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	flag := "--deny"
	if p.decision == approvals.Approved {
		flag = "--yes"
	}
	titles := make([]string, 0, 5)
	for _, a := range req.Actions() {
		titles = append(titles, a.Title)
	}
	fmt.Fprintf(p.out, "\n%s\n\nActions: %s\n(%s: %s)\n", req.Message(), strings.Join(titles, " | "), flag, p.decision)
	return p.decision, nil
}

// errNoTerminal says why a prompt was denied without asking.
var errNoTerminal = errors.New("approval needed, but there is no terminal to ask on (pass --yes or --deny)")

// noTerminalPrompter denies: with no terminal and neither --yes nor --deny,
// Warden fails closed.
type noTerminalPrompter struct{ out io.Writer }

func (p noTerminalPrompter) Prompt(_ context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	fmt.Fprintf(p.out, "\n%s\n", req.Message())
	return approvals.Denied, errNoTerminal
}

// terminalReset selects the ASCII character set (SI, and ESC ( B for G0)
// and resets colours and attributes (SGR 0).
const terminalReset = "\x0f\x1b(B\x1b[0m"

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isTerminalFile(f)
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	return isTerminalFile(f)
}
