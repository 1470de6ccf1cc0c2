package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// promptOnTerminal runs `warden exec --approval untrusted -- argv` with a
// real terminal as its input, answers the prompt with answer, and returns
// what warden wrote to stderr (where the prompt goes), the exit status and
// the workspace.
func promptOnTerminal(t *testing.T, answer string, argv ...string) (stderr string, code int, ws string) {
	t.Helper()
	home := t.TempDir()
	ws = filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	master, slave := openPTY(t)
	args := append([]string{"exec", "--cwd", ws, "--approval", "untrusted", "--"}, argv...)
	cmd := exec.Command(wardenBin(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	var errBuf bytes.Buffer
	cmd.Stdin, cmd.Stderr = slave, &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	master.Write([]byte(answer + "\n"))
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return errBuf.String(), code, ws
}

// TestPromptEscapeTerminalCarriageReturnAttack: the script of issue 18,
// whose \r and ESC[2K erase `touch X` on a terminal so only `ls` shows, is
// shown whole and escaped; denying it runs nothing. The twin, a plain
// command with accented and CJK letters, is shown as written and runs.
func TestPromptEscapeTerminalCarriageReturnAttack(t *testing.T) {
	script := "touch X #\r\x1b[2K\x1b[1G ls"
	out, code, ws := promptOnTerminal(t, "4", "sh", "-c", script)
	prompt, _, _ := strings.Cut(out, "Choose 1-")
	for _, want := range []string{
		"Warden: run `touch X #\\r\\x1b[2K\\x1b[1G ls`?",
		"Runs 1 command: touch",
		"Note: this request holds control or invisible characters",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the terminal prompt lacks %q:\n%q", want, prompt)
		}
	}
	if strings.ContainsAny(prompt, "\r\x1b") {
		t.Errorf("the terminal prompt holds raw control characters:\n%q", prompt)
	}
	if code != exitRefused {
		t.Errorf("denied: exit %d, want %d", code, exitRefused)
	}
	if _, err := os.Stat(filepath.Join(ws, "X")); err == nil {
		t.Error("denied, yet X was created")
	}

	// Twin: é and 日本 stay readable, nothing is escaped, and it runs.
	out, code, ws = promptOnTerminal(t, "1", "touch", "café-日本")
	if !strings.Contains(out, "Warden: run `touch café-日本`?\n") || strings.Contains(out, "Note:") || strings.Contains(out, `\u`) {
		t.Errorf("plain command not shown as written:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "café-日本")); err != nil || code != 0 {
		t.Errorf("allowed plain command: exit %d, stat %v\n%s", code, err, out)
	}
}

// TestPromptEscapeTerminalLongCommand: a 10 KB script is shown as head and
// tail with the count of bytes not shown, so a payload at its end is seen;
// the prompt stays far smaller than the command.
func TestPromptEscapeTerminalLongCommand(t *testing.T) {
	script := "echo start; " + strings.Repeat("echo padding-padding; ", 460) + "touch tail-payload"
	if len(script) < 10_000 {
		t.Fatalf("script is %d bytes, want 10 KB", len(script))
	}
	out, code, ws := promptOnTerminal(t, "4", "bash", "-c", script)
	prompt, _, _ := strings.Cut(out, "Choose 1-")
	hidden := len(script) - 1000 - 400
	for _, want := range []string{
		"Warden: run the command below?",
		"    echo start; echo padding-padding;",
		"… " + strconv.Itoa(hidden) + " bytes not shown …",
		"touch tail-payload\n",
		"Runs 462 commands: echo ×461, touch\n",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	if len(prompt) > 3000 {
		t.Errorf("the prompt is %d bytes for a %d-byte command", len(prompt), len(script))
	}
	if _, err := os.Stat(filepath.Join(ws, "tail-payload")); err == nil || code != exitRefused {
		t.Errorf("denied long command ran (exit %d)", code)
	}
}
