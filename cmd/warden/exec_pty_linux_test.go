package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal pair: the test writes the user's
// keystrokes to master; warden reads them from the terminal, slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestExecTerminalPrompt answers the prompt on a real terminal with each
// action and checks the effect.
func TestExecTerminalPrompt(t *testing.T) {
	cases := []struct {
		answer  string
		code    int
		created bool
		rule    bool
	}{
		{"1", 0, true, false},            // Allow once
		{"2", 0, true, false},            // Allow for session
		{"3", 0, true, true},             // Always allow `touch file`
		{"4", exitRefused, false, false}, // Deny
		{"5", exitRefused, false, false}, // Deny and stop
		{"", exitRefused, false, false},  // just Enter: Deny
		{"y", 0, true, false},
		{"9\n4", exitRefused, false, false}, // not an option: asked again, then Deny
		{"maybe\n1", 0, true, false},        // not an option: asked again, then Allow once
	}
	for _, c := range cases {
		home := t.TempDir()
		ws := filepath.Join(home, "ws")
		os.MkdirAll(ws, 0o755)
		master, slave := openPTY(t)
		cmd := exec.Command(wardenBin(t), "exec", "--cwd", ws, "--approval", "untrusted", "--", "touch", "file")
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stderr = slave, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		master.Write([]byte(c.answer + "\n"))
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		_, statErr := os.Stat(filepath.Join(ws, "file"))
		rules, _ := os.ReadFile(filepath.Join(home, "config", "warden", "rules", "default.rules"))
		if code != c.code || (statErr == nil) != c.created || (len(rules) > 0) != c.rule {
			t.Errorf("answer %q: exit %d (want %d), created %v (want %v), rules %q\n%s", c.answer, code, c.code, statErr == nil, c.created, rules, stderr.String())
		}
		if !strings.Contains(stderr.String(), "3) Always allow `touch file`") || !strings.Contains(stderr.String(), "5) Deny and stop") {
			t.Errorf("answer %q: prompt lacks the actions:\n%s", c.answer, stderr.String())
		}
	}
}
