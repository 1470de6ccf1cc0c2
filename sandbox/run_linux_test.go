package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// run runs argv in a workspace-write, no-network sandbox rooted at ws.
func run(t *testing.T, ws string, c Command) Result {
	t.Helper()
	c.Helper = testHelper
	if c.Cwd == "" {
		c.Cwd = ws
	}
	if c.Policy.Workspace == nil {
		c.Policy.Workspace = []string{ws} // ws is the session's workspace
	}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run %v: %v", c.Argv, err)
	}
	return res
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestRunExitCodeOutputAndEnv(t *testing.T) {
	ws := t.TempDir()
	res := run(t, ws, Command{Argv: sh(`echo out; echo err >&2; echo "$WARDEN_SANDBOX $WARDEN_SANDBOX_NETWORK_DISABLED"; exit 3`)})
	if res.ExitCode != 3 || res.Sandbox != "linux" || len(res.NotEnforced) != 0 {
		t.Fatalf("result %+v", res)
	}
	if string(res.Stdout) != "out\nlinux 1\n" || string(res.Stderr) != "err\n" {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if !bytes.Contains(res.Output, []byte("out")) || !bytes.Contains(res.Output, []byte("err")) {
		t.Errorf("combined %q", res.Output)
	}
}

func TestRunWithoutShellPassesArgvVerbatim(t *testing.T) {
	ws := t.TempDir()
	res := run(t, ws, Command{Argv: []string{"printf", "%s|", "a b", "$HOME", ";rm"}})
	if string(res.Stdout) != "a b|$HOME|;rm|" {
		t.Errorf("argv was reinterpreted: %q", res.Stdout)
	}
	res = run(t, ws, Command{Argv: []string{"echo", "$((1+2))"}, Shell: true})
	if strings.TrimSpace(string(res.Stdout)) != "3" {
		t.Errorf("shell mode: %q", res.Stdout)
	}
}

func TestRunStdinIsDevNull(t *testing.T) {
	res := run(t, t.TempDir(), Command{Argv: []string{"cat"}})
	if res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Errorf("cat of stdin: %+v", res)
	}
}

func TestRunOutputCapAndStreaming(t *testing.T) {
	var mu sync.Mutex
	var streamed int
	res := run(t, t.TempDir(), Command{
		Argv:        sh(`head -c 100000 /dev/zero`),
		OutputLimit: 1000,
		OnOutput: func(s Stream, b []byte) {
			mu.Lock()
			streamed += len(b)
			mu.Unlock()
		},
	})
	if len(res.Stdout) != 1000 || !res.Truncated {
		t.Errorf("kept %d bytes, truncated=%v", len(res.Stdout), res.Truncated)
	}
	if streamed != 100000 {
		t.Errorf("streamed %d bytes, want all 100000", streamed)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	res := run(t, t.TempDir(), Command{Argv: []string{"no-such-command-xyz"}})
	if res.ExitCode != 127 || !strings.Contains(string(res.Stderr), "not found") || res.SandboxDenied {
		t.Errorf("%+v", res)
	}
}

func TestRunRefusesUnusableCommands(t *testing.T) {
	for _, c := range []Command{
		{},
		{Argv: []string{"true"}, Cwd: "/no/such/dir"},
		{Argv: []string{"true"}, Policy: Policy{WritableRoots: []string{"relative"}}},
	} {
		c.Helper = testHelper
		_, err := Run(context.Background(), c)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%+v: want a RefusedError, got %v", c, err)
		}
	}
}

func TestRunTimeoutAndCancel(t *testing.T) {
	ws := t.TempDir()
	start := time.Now()
	res := run(t, ws, Command{Argv: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond})
	if !res.TimedOut || res.ExitCode == 0 || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %+v after %v", res, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Command{Argv: []string{"sleep", "30"}, Cwd: ws, Helper: testHelper})
	if err != nil || !res.Canceled || res.TimedOut {
		t.Errorf("cancel: %+v %v", res, err)
	}
}

func TestRunPausedClockDoesNotTimeOut(t *testing.T) {
	// A human is being asked for the whole run: the budget must not be
	// spent. The clock starts counting at NewClock, so the budget is large
	// enough that a loaded machine cannot use it up before Pause.
	clock := NewClock(time.Second)
	clock.Pause()
	res := run(t, t.TempDir(), Command{Argv: []string{"sleep", "1.3"}, Clock: clock})
	if res.TimedOut || res.ExitCode != 0 {
		t.Errorf("paused clock fired: %+v", res)
	}
	// Resumed, the rest of the budget runs out and kills the command.
	created := time.Now()
	clock = NewClock(time.Second)
	clock.Pause()
	left := clock.Remaining() // exact while paused, however slow the machine
	go func() {
		time.Sleep(200 * time.Millisecond)
		clock.Resume()
	}()
	res = run(t, t.TempDir(), Command{Argv: []string{"sleep", "30"}, Clock: clock})
	// Paused for at least 200ms, then what was left: it cannot fire sooner.
	if took := time.Since(created); !res.TimedOut || took < 200*time.Millisecond+left {
		t.Errorf("resumed clock fired after %v with %v left: %+v", took, left, res)
	}
}

func TestRunDeniedWriteIsFlaggedAsSandboxDenial(t *testing.T) {
	res := run(t, t.TempDir(), Command{Argv: sh(`echo x > /etc/warden-denied`)})
	if res.ExitCode == 0 || !res.SandboxDenied || res.DenialReason == "" {
		t.Errorf("%+v", res)
	}
}

func TestRunUnsandboxedModes(t *testing.T) {
	ws := t.TempDir()
	res := run(t, ws, Command{Argv: sh(`echo "[$WARDEN_SANDBOX][$WARDEN_SANDBOX_NETWORK_DISABLED]"`), Policy: Policy{Mode: DangerFullAccess}})
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "[][]" || res.Sandbox != "none" {
		t.Errorf("%+v %q", res, res.Stdout)
	}
}

// The helper forks once per command: every pid its namespace gave out
// before the command's is one of the helper's threads. os.StartProcess's
// first use in a process probes pidfd support with a fork of its own,
// which cost every run 0.3 ms.
func TestHelperForksOnlyTheCommand(t *testing.T) {
	if !namespacesUsable() {
		t.Skip("no user namespaces: no pid namespace to count in")
	}
	res := run(t, t.TempDir(), Command{Argv: sh(`i=2; while [ $i -lt $$ ]; do [ -d /proc/1/task/$i ] || echo "pid $i is no helper thread"; i=$((i+1)); done; echo "command $$"`)})
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "command ") {
		t.Fatalf("exit %d: %s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// A command that cannot be executed (a file without a #! line or a
// format the kernel knows) is reported with the path and the reason, and
// nothing ran.
func TestHelperReportsAnExecFailure(t *testing.T) {
	ws := t.TempDir()
	script := ws + "/noshebang"
	if err := os.WriteFile(script, []byte("\x00\x01binary?"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Command{Argv: []string{script}, Cwd: ws, Helper: testHelper, Policy: Policy{Workspace: []string{ws}}})
	if err == nil || !strings.Contains(err.Error(), "fork/exec "+script) || !strings.Contains(err.Error(), "exec format error") {
		t.Fatalf("err = %v, want the path and exec format error", err)
	}
}
