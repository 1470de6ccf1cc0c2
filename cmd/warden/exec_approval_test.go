package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExecApprovalFlags(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	rules := filepath.Join(home, "team.rules")
	os.WriteFile(rules, []byte(`prefix_rule(pattern=["touch", "forbidden"], decision="forbidden", justification="not this file")`+"\n"), 0o644)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(ws, name)); return err == nil }

	// A known-safe command runs without asking, even with no terminal.
	os.WriteFile(filepath.Join(ws, "greeting"), []byte("hello\n"), 0o644)
	out, errOut, code := runWardenEnv(t, home, "", "exec", "--cwd", ws, "--approval", "untrusted", "--", "cat", "greeting")
	if code != 0 || out != "hello\n" || strings.Contains(errOut, "Warden:") {
		t.Errorf("safe command: exit %d out %q err %q", code, out, errOut)
	}
	// No terminal and neither --yes nor --deny: denied, 77, reason on stderr.
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--approval", "untrusted", "--", "touch", "a")
	if code != exitRefused || !strings.Contains(errOut, "no terminal") || exists("a") {
		t.Errorf("no terminal: exit %d err %q", code, errOut)
	}
	// --deny refuses, --yes allows once.
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--approval", "untrusted", "--deny", "--", "touch", "b")
	if code != exitRefused || !strings.Contains(errOut, "rejected by user") || exists("b") {
		t.Errorf("--deny: exit %d err %q", code, errOut)
	}
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--approval", "untrusted", "--yes", "--", "touch", "c")
	if code != 0 || !exists("c") || !strings.Contains(errOut, "touch c") {
		t.Errorf("--yes: exit %d err %q", code, errOut)
	}
	// A forbidden rule refuses even with --yes.
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--rules", rules, "--yes", "--", "touch", "forbidden")
	if code != exitRefused || !strings.Contains(errOut, "not this file") || exists("forbidden") {
		t.Errorf("forbidden: exit %d err %q", code, errOut)
	}
	// never: what needs approval is refused without asking.
	// (rm -rf of c and a .git: repository data, which the sandbox would let it delete.)
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--approval", "never", "--yes", "--", "rm", "-rf", "c", ".git")
	if code != exitRefused || !exists("c") || strings.Contains(errOut, "(--yes") {
		t.Errorf("never: exit %d err %q", code, errOut)
	}
	// The command's own exit status comes through.
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--", "sh", "-c", "exit 3")
	if code != 3 {
		t.Errorf("exit status %d, want 3; stderr %q", code, errOut)
	}
	// The sandbox blocks the network; the failure is reported as a denial.
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9")
	if code == 0 || !strings.Contains(errOut, "sandbox denial") {
		t.Errorf("network: exit %d err %q", code, errOut)
	}
	// Every decision is in the audit log.
	audit, err := os.ReadFile(filepath.Join(home, "state", "warden", "audit.log"))
	if err != nil || strings.Count(string(audit), "\n") < 10 || !strings.Contains(string(audit), `"event":"refused"`) {
		t.Errorf("audit log: %v\n%s", err, audit)
	}
	// Contradictory flags are a usage error.
	_, _, code = runWardenEnv(t, home, "", "exec", "--yes", "--deny", "--", "ls")
	if code != exitUsage {
		t.Errorf("--yes --deny: exit %d", code)
	}
}
