package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/testhome"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain keeps every warden the tests start out of the user's real
// config, state and cache directories, and removes the binary wardenBin may
// have built.
func TestMain(m *testing.M) {
	if os.Getenv(subreaperEnv) != "" {
		os.Exit(subreaperMain(os.Args[1:]))
	}
	cleanup, err := testhome.Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// wardenBin returns the binary under test: $WARDEN_BIN (set by make), or one
// built once into a temporary directory so plain `go test` works too.
func wardenBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("WARDEN_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "warden")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build warden: %v", buildErr)
	}
	return builtBin
}

func runWarden(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCmd(t, exec.Command(wardenBin(t), args...))
}

// runCmd runs a prepared warden command and returns its output and exit
// status; only a failure to start it at all fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if cmd.SysProcAttr == nil {
		// No controlling terminal: a prompt must not reach the terminal
		// the tests were started from.
		cmd.SysProcAttr = noTerminalAttr()
	}
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return out.String(), errOut.String(), code
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"version", "--no-such-flag"},
		{"version", "extra"},
	} {
		_, stderr, code := runWarden(t, args...)
		if code != exitUsage {
			t.Errorf("warden %v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(stderr, "usage") && !strings.Contains(stderr, "--help") {
			t.Errorf("warden %v: stderr does not point at usage: %q", args, stderr)
		}
	}
}

// Every command and subcommand answers --help and -h with its usage on
// stdout and exit 0, flags described.
func TestEveryCommandHasHelp(t *testing.T) {
	var lines [][]string
	for name, c := range commands {
		if !c.hidden {
			lines = append(lines, []string{name})
		}
	}
	lines = append(lines, []string{"policy", "check"}, []string{"cache", "clean"})
	for _, words := range lines {
		for _, h := range []string{"--help", "-h"} {
			args := append(append([]string(nil), words...), h)
			stdout, stderr, code := runWarden(t, args...)
			if code != 0 {
				t.Errorf("warden %v: exit %d, stderr %q", args, code, stderr)
			}
			usage := "usage: warden " + strings.Join(words, " ")
			if strings.Count(stdout, usage) != 1 || stderr != "" {
				t.Errorf("warden %v: want %q once on stdout, got stdout %q, stderr %q", args, usage, stdout, stderr)
			}
			if strings.Contains(stdout, "flags:") && regexp.MustCompile(`(?m)^  -\S+.*\n(\s*\n|$)`).MatchString(stdout) {
				t.Errorf("warden %v: a flag without a description:\n%s", args, stdout)
			}
		}
	}
	stdout, _, code := runWarden(t, "help")
	if code != 0 || !strings.Contains(stdout, "version") {
		t.Errorf("warden help: exit %d, %q", code, stdout)
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		stdout, _, code := runWarden(t, arg)
		if code != 0 || !strings.HasPrefix(stdout, "warden ") || !strings.Contains(stdout, "go1.") {
			t.Errorf("warden %s: exit %d, %q", arg, code, stdout)
		}
	}
}
