package lsp_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestLongRunShowsElapsedAndLastLine: while a command runs, its progress
// says every second how long it has run and the last line it printed (a
// carriage return ends a line, escape sequences shown escaped), so a cold
// first build does not look like a hang. Once it ends, the outcome follows
// and no running report comes after it.
func TestLongRunShowsElapsedAndLastLine(t *testing.T) {
	c, _ := execServer(t, nil)
	mark := c.Mark()
	script := `echo "step one"; sleep 2.3; printf 'step two \033[2K\r'; sleep 1.5; echo done`
	if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"sh", "-c", script}}); err != nil {
		t.Fatal(err)
	}
	end := progressEnd(t, c, mark)
	if !strings.Contains(end, "exited 0 (sandboxed)") {
		t.Fatalf("ended %q", end)
	}
	var reports []string
	for _, m := range c.Messages()[mark:] {
		var p struct {
			Value struct{ Kind, Message string }
		}
		if m.Method == "$/progress" && lsptest.ProgressKind("report")(m) && m.Decode(&p) == nil {
			reports = append(reports, p.Value.Message)
		}
	}
	joined := strings.Join(reports, "\n")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile("Running `echo .*` \\([12]s\\): step one"),
		regexp.MustCompile("Running `echo .*` \\([34]s\\): step two \\\\x1b\\[2K"),
	} {
		if !want.MatchString(joined) {
			t.Errorf("progress lacks %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "\x1b") {
		t.Errorf("an escape sequence reached the progress raw:\n%q", joined)
	}
	// Nothing after the end: the watch stopped with the command.
	time.Sleep(1500 * time.Millisecond)
	seenEnd := false
	for _, m := range c.Messages()[mark:] {
		if m.Method != "$/progress" {
			continue
		}
		if lsptest.ProgressKind("end")(m) {
			seenEnd = true
		} else if seenEnd {
			t.Errorf("progress after the end: %s", m.Params)
		}
	}
}
