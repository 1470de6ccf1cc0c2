package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestPromptEscapeEditorDialogBidiJustification: a justification with a
// right-to-left override (which would show "exe.txt" reversed so the dialog
// reads as something else) and a command with \r and ESC reach the editor's
// dialog escaped; the notification that follows is escaped too, and the audit
// log keeps the exact command. The twin, a plain request with é and 日本, is
// shown as written.
func TestPromptEscapeEditorDialogBidiJustification(t *testing.T) {
	state := t.TempDir()
	c := lsptest.Start(t, lsptest.Options{Env: []string{"XDG_STATE_HOME=" + state}})
	c.Initialize(map[string]any{"approvalPolicy": "untrusted"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))

	mark := c.Mark()
	script := "touch made #\r\x1b[2K ls"
	summary := runExec(t, c, map[string]any{
		"command":       script,
		"justification": "tidy \u202etxt.exe\u202c up\u2066\u200b",
	})
	ds := dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("%d dialogs, want 1", len(ds))
	}
	msg := ds[0].Message
	for _, want := range []string{
		"Warden: run `touch made #\\r\\x1b[2K ls`?",
		`The model's reason: tidy \u202etxt.exe\u202c up\u2066\u200b`,
		"Runs 1 command: touch",
		"Note: this request holds control or invisible characters",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("dialog lacks %q:\n%s", want, msg)
		}
	}
	if strings.ContainsAny(msg, "\r\x1b\u202e\u202c\u2066\u200b") || strings.ContainsAny(summary, "\r\x1b") {
		t.Errorf("raw control characters reached the editor:\ndialog %q\nsummary %q", msg, summary)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "made")); err == nil {
		t.Error("denied, yet the command ran")
	}
	audit, err := os.ReadFile(filepath.Join(state, "warden", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(string(audit), "\n") {
		var ev struct {
			Event         string   `json:"event"`
			Argv          []string `json:"argv"`
			Justification string   `json:"justification"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "prompt" && len(ev.Argv) == 3 && ev.Argv[2] == script &&
			ev.Justification == "tidy \u202etxt.exe\u202c up\u2066\u200b" {
			found = true
		}
	}
	if !found {
		t.Errorf("the audit log lacks the exact command and justification:\n%s", audit)
	}

	// Twin: readable letters in any script are not escaped.
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark = c.Mark()
	runExec(t, c, map[string]any{"command": []string{"touch", "café-日本"}, "justification": "naïve café 日本"})
	ds = dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("twin: %d dialogs, want 1", len(ds))
	}
	if msg := ds[0].Message; !strings.HasPrefix(msg, "Warden: run `touch café-日本`?\n") || !strings.Contains(msg, "The model's reason: naïve café 日本\n") || strings.Contains(msg, "Note:") {
		t.Errorf("twin dialog not shown as written:\n%s", msg)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "café-日本")); err != nil {
		t.Errorf("allowed twin did not run: %v", err)
	}
}

// TestPromptEscapeEditorDialogLongCommand: a 10 KB command in an editor
// dialog shows its head, its tail (where the payload is) and how many bytes
// between are not shown.
func TestPromptEscapeEditorDialogLongCommand(t *testing.T) {
	c, _ := execServer(t, map[string]any{"approvalPolicy": "untrusted"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	script := "echo start; " + strings.Repeat("echo padding-padding; ", 460) + "touch tail-payload"
	mark := c.Mark()
	runExec(t, c, map[string]any{"command": script})
	ds := dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("%d dialogs, want 1", len(ds))
	}
	msg := ds[0].Message
	for _, want := range []string{"Warden: run the command below?\n", "    echo start;", "bytes not shown …", "touch tail-payload\n", "Runs 462 commands"} {
		if !strings.Contains(msg, want) {
			t.Errorf("dialog lacks %q:\n%s", want, msg)
		}
	}
	if len(msg) > 4000 {
		t.Errorf("dialog is %d bytes for a %d-byte command", len(msg), len(script))
	}
}
