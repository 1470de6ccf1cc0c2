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
	"time"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/approvals"
)

// terminalPrompter asks on the terminal: the prompt goes to out (stderr, so
// the command's own output stays clean), the answer comes from in. An empty
// line, end of input, an unknown answer or the timeout is a denial.
type terminalPrompter struct {
	in      *bufio.Reader
	out     io.Writer
	timeout time.Duration
}

// Prompt implements approvals.Prompter.
func (p *terminalPrompter) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	actions := req.Actions()
	if isTerminalWriter(p.out) {
		// Text printed before the prompt (the model's streamed answer, a
		// command's output) may have left the terminal concealing text,
		// drawing it in the background colour or in the line-drawing
		// character set: reset that so the prompt is seen as written.
		io.WriteString(p.out, terminalReset)
	}
	fmt.Fprintf(p.out, "\n%s\n\n", req.Message())
	deny := 0
	for i, a := range actions {
		fmt.Fprintf(p.out, "  %d) %s\n", i+1, a.Title)
		if a.Decision == approvals.Denied {
			deny = i + 1
		}
	}
	fmt.Fprintf(p.out, "Choose 1-%d [%d: %s]: ", len(actions), deny, approvals.TitleDeny)

	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	line := make(chan string, 1)
	readErr := make(chan error, 1)
	go func() {
		s, err := p.in.ReadString('\n')
		if err != nil && s == "" {
			readErr <- err
			return
		}
		line <- s
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return approvals.Denied, fmt.Errorf("no answer on the terminal: %w", ctx.Err())
	case err := <-readErr:
		fmt.Fprintln(p.out)
		return approvals.Denied, fmt.Errorf("no answer on the terminal: %w", err)
	case s := <-line:
		return chooseAction(actions, strings.TrimSpace(s))
	}
}

// chooseAction reads an answer: a number from the list, y (allow once) or
// n (deny). Anything else denies.
func chooseAction(actions []approvals.Action, s string) (approvals.ReviewDecision, error) {
	switch strings.ToLower(s) {
	case "":
		return approvals.Denied, nil
	case "y", "yes":
		return approvals.Approved, nil
	case "n", "no":
		return approvals.Denied, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > len(actions) {
		return approvals.Denied, fmt.Errorf("answer %q is not one of 1-%d", s, len(actions))
	}
	return actions[n-1].Decision, nil
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
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
