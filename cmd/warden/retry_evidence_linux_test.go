package main

import (
	"strings"
	"testing"
)

// blockedLine is the "Blocked:" line of the retry dialog in stderr.
func blockedLine(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Blocked: ") {
			return l
		}
	}
	t.Fatalf("no Blocked: line in the retry dialog:\n%s", stderr)
	return ""
}

// TestExecRetryQuotesTheMatchingLine: the retry dialog after a sandbox
// denial quotes the line that showed the denial, not the last line the
// command printed; its twin, whose denial is the last line, quotes that one;
// and a denial line carrying terminal escapes is shown escaped.
func TestExecRetryQuotesTheMatchingLine(t *testing.T) {
	g := newGrantEnv(t)
	// The denial first, then an unrelated last line (as git clone prints).
	first := g.script(t, "clone.sh", `touch "`+g.a+`/f"
echo "fatal: Failed to clone 'b' a second time" >&2
exit 1`)
	_, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--deny", "--", first)
	line := blockedLine(t, stderr)
	if code == 0 || !strings.Contains(line, "touch: cannot touch '"+g.a+"/f'") || strings.Contains(line, "second time") {
		t.Errorf("denial first: exit %d, %q\n%s", code, line, stderr)
	}
	// Twin: the denial is the last line.
	last := g.script(t, "last.sh", `echo "starting the build" >&2
touch "`+g.a+`/g"`)
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--deny", "--", last)
	line = blockedLine(t, stderr)
	if code == 0 || !strings.Contains(line, "touch: cannot touch '"+g.a+"/g'") || strings.Contains(line, "starting") {
		t.Errorf("denial last: exit %d, %q\n%s", code, line, stderr)
	}
	// The model's output is attacker text: a matching line that clears the
	// screen and retitles the terminal is quoted escaped.
	esc := g.script(t, "esc.sh", `printf 'note: \033[2J\033]0;pwned\007Read-only file system\n' >&2
touch "`+g.a+`/h"`)
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--deny", "--", esc)
	line = blockedLine(t, stderr)
	// (The command's own stderr passes through as it printed it; Warden's
	// lines quote it escaped.)
	warden := line
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "warden exec: the failure looks like") {
			warden += "\n" + l
		}
	}
	if code == 0 || strings.ContainsAny(warden, "\x1b\x07") || strings.Count(warden, `note: \x1b[2J\x1b]0;pwned\aRead-only file system`) != 2 {
		t.Errorf("escapes: exit %d, %q\n%q", code, line, stderr)
	}
}
