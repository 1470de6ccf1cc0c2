package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

func TestServeFlags(t *testing.T) {
	_, stderr, code := runWarden(t, "serve", "--log-level", "loud")
	if code != exitUsage || !strings.Contains(stderr, `--log-level "loud"`) {
		t.Errorf("bad level: exit %d, %q", code, stderr)
	}
	_, stderr, code = runWarden(t, "serve", "extra")
	if code != exitUsage || !strings.Contains(stderr, "extra") {
		t.Errorf("extra argument: exit %d, %q", code, stderr)
	}
	stdout, _, code := runWarden(t, "serve", "--help")
	if code != 0 || !strings.Contains(stdout, "--log-file") {
		t.Errorf("help: exit %d, %q", code, stdout)
	}
}

// Logs go to --log-file; stdout carries nothing but the protocol (lsptest
// fails on any byte that is not a framed message).
func TestServeLogsToFileNeverStdout(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "warden.log")
	c := lsptest.Start(t, lsptest.Options{Bin: wardenBin(t), Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(nil)
	c.Open("a.txt", "plaintext", "x")
	c.Status()
	if code := c.Shutdown(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warden serve starting", "msg=initialize", "didOpen", "msg=exit"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log file lacks %q:\n%s", want, data)
		}
	}
	if c.Stderr() != "" {
		t.Errorf("with --log-file, stderr should stay empty: %q", c.Stderr())
	}
}

// A broken config.toml does not stop the server, but it is shown (file,
// line and key) and the server falls back to asking before everything. None
// of the file applies; the model from the environment and the editor's
// settings still do.
func TestServeWithBrokenConfigFailsClosed(t *testing.T) {
	home := t.TempDir()
	cfgDir := filepath.Join(home, "warden")
	os.MkdirAll(cfgDir, 0o700)
	file := filepath.Join(cfgDir, "config.toml")
	os.WriteFile(file, []byte("approval_policy = \"never\"\nsandbox = 1\n"), 0o600)
	c := lsptest.Start(t, lsptest.Options{Bin: wardenBin(t), Env: []string{"XDG_CONFIG_HOME=" + home,
		"WARDEN_MODEL=env-model", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"}})
	c.Initialize(map[string]any{"networkAccess": true})
	c.WaitFor("window/showMessage", lsptest.MessageContains(file+`:2: unknown key "sandbox"`))
	st := c.Status()
	if st.Policy.ApprovalPolicy != "untrusted" {
		t.Errorf("policy with a broken config = %+v, want untrusted", st.Policy)
	}
	if !st.Model.Configured || st.Model.Name != "env-model" {
		t.Errorf("the environment's model was dropped with the broken file: %+v", st.Model)
	}
	if !st.Policy.NetworkAccess {
		t.Errorf("the editor's settings were dropped with the broken file: %+v", st.Policy)
	}
}

// An editor that dies closes the server's stdout: the next reply must not
// kill warden with SIGPIPE (running jobs and the audit log would be cut
// off); it notices the end of its input and exits normally.
func TestServeSurvivesAClosedStdout(t *testing.T) {
	cmd := exec.Command(wardenBin(t), "serve")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	body = `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	stdin.Close()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("warden was killed by %v; stderr:\n%s", ws.Signal(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit status %d (%v), want 1 (input ended without exit)", code, err)
	}
}
