package approvals

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wardenhq/warden/approvals/command"
)

// TestDisplayCommandMatchesHeading: the command in a reason line reads
// exactly as the dialog's heading quotes it, hidden characters escaped the
// same way ($'...' for a word, \r in a script), with no raw control
// character left.
func TestDisplayCommandMatchesHeading(t *testing.T) {
	for _, argv := range [][]string{
		{"touch", "a\rb"},
		{"sh", "-c", "touch X #\r\x1b[2K ls"},
		{"ls", "-la", "x\u202etxt.exe"},
		{"echo", "it's", "a b"},
		{"bash", "-lc", ""},
		{"ls", "-la", "café/日本"},
	} {
		shown := command.Display(argv)
		heading := strings.SplitN(PromptRequest{Kind: PromptCommand, Argv: argv, Cwd: "/w"}.Message(), "\n", 2)[0]
		if want := "Warden: run `" + shown + "`?"; heading != want {
			t.Errorf("%q: heading %q, reason shows %q", argv, heading, shown)
		}
		if command.NeedsEscape(shown) || strings.Contains(shown, "\n") {
			t.Errorf("%q: %q holds hidden characters", argv, shown)
		}
	}
	if got := command.Display([]string{"touch", "a\rb"}); got != `touch $'a\rb'` {
		t.Errorf("word with \\r shown as %q", got)
	}
	// A multi-line script stays on one line.
	if got := command.Display([]string{"bash", "-c", "ls\nrm -rf x"}); got != `ls\nrm -rf x` {
		t.Errorf("multi-line script shown as %q", got)
	}
}

// TestDisplayCommandLongKeepsTail: a long command is never cut so that its
// tail is hidden: the reason shows head, "… N bytes not shown …" and tail,
// N exact, cuts on character boundaries; the twin, a short command, is
// shown whole.
func TestDisplayCommandLongKeepsTail(t *testing.T) {
	script := "echo " + strings.Repeat("日本 harmless ", 400) + "; rm -rf ~/payload"
	argv := []string{"bash", "-lc", script}
	got := command.Display(argv)
	if !strings.HasPrefix(got, "echo 日本") || !strings.HasSuffix(got, "; rm -rf ~/payload") {
		t.Errorf("head or tail missing: %q", got)
	}
	head, tail, _ := strings.Cut(got, " … ")
	_, tail, _ = strings.Cut(tail, " … ")
	hidden := len(script) - len(head) - len(tail)
	if !strings.Contains(got, fmt.Sprintf("… %d bytes not shown …", hidden)) {
		t.Errorf("%q does not say %d bytes are not shown", got, hidden)
	}
	if len(got) > command.MaxReasonBytes+40 || !utf8.ValidString(got) {
		t.Errorf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	// Escapes happen after the cut: a control character in the tail shows.
	tricky := command.Display([]string{"sh", "-c", strings.Repeat("x", 2000) + "\rls"})
	if !strings.HasSuffix(tricky, `\rls`) {
		t.Errorf("tail's \\r not shown: %q", tricky[len(tricky)-20:])
	}
	// Through the reason line of a real evaluation.
	ev := (&Evaluator{Policy: Policy{Ask: Untrusted}}).Evaluate(CommandRequest{Argv: argv, Cwd: t.TempDir(), Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if !strings.Contains(ev.Reason, "rm -rf ~/payload`") || !strings.Contains(ev.Reason, "bytes not shown") {
		t.Errorf("reason hides the tail: %q", ev.Reason)
	}
	msg := PromptRequest{Kind: PromptCommand, Argv: argv, Cwd: "/w", Reason: ev.Reason}.Message()
	if !strings.Contains(msg, "Warden asks because: `echo 日本") || !strings.Contains(msg, "rm -rf ~/payload` needs approval") {
		t.Errorf("Warden asks because line hides the tail:\n%s", msg)
	}
	// The twin: a short command, whole.
	if got := command.Display([]string{"ls", "-la"}); got != "ls -la" {
		t.Errorf("short command shown as %q", got)
	}
	exact := strings.Repeat("a", command.MaxReasonBytes)
	if got := command.Display([]string{"bash", "-c", exact}); got != exact {
		t.Errorf("a command of exactly %d bytes was cut", command.MaxReasonBytes)
	}
}

// TestDisplayCommandBlankScript: an empty or blank script is shown with
// its shell, not as an empty quote.
func TestDisplayCommandBlankScript(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"bash", "-lc", ""}, "bash -lc ''"},
		{[]string{"sh", "-c", "  "}, "sh -c '  '"},
		{[]string{"bash", "-c", "\n"}, `bash -c $'\n'`},
		{[]string{"bash", "-lc", "ls"}, "ls"}, // the twin: a script is shown as itself
	} {
		if got := command.Display(c.argv); got != c.want {
			t.Errorf("%q shown as %q, want %q", c.argv, got, c.want)
		}
	}
	ev := (&Evaluator{Policy: Policy{Ask: OnRequest}}).Evaluate(CommandRequest{Argv: []string{"bash", "-lc", ""}, Cwd: t.TempDir(), Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if !strings.HasPrefix(ev.Reason, "`bash -lc ''` needs approval") {
		t.Errorf("reason %q", ev.Reason)
	}
}
