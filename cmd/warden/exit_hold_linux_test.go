package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// subreaperEnv makes the test binary a subreaper that runs its arguments and
// then waits for every process they left behind (subreaperMain).
const subreaperEnv = "WARDEN_TEST_SUBREAPER"

// subreaperMain runs argv as a child subreaper: whatever the command leaves
// running when it exits becomes this process's child. It prints the
// command's exit status, then waits until all of them have ended, or fails
// after 10 s.
func subreaperMain(argv []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		return 125
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			fmt.Fprintln(os.Stderr, "subreaper:", err)
			return 125
		}
		code = exitErr.ExitCode()
	}
	fmt.Printf("exit=%d\n", code)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			fmt.Println("all ended")
			return 0
		case pid > 0, errors.Is(err, unix.EINTR):
			continue
		case time.Now().After(deadline):
			fmt.Println("still running 10s after the command exited")
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A one-shot `warden exec` leaves its sandbox helper holding its
// notification group until warden itself has exited (so warden's exit does
// not wait for the group's teardown); the helper must then end at once, not
// linger. Run under a subreaper, everything warden started has ended soon
// after it exits, and the command's result is unchanged. Twin: read-only
// (no watch, no hold) ends the same way.
func TestExecLeavesNothingRunningAfterItExits(t *testing.T) {
	bin := wardenBin(t)
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			cmd := exec.Command(os.Args[0], bin, "exec", "--sandbox", mode, "--", "sh", "-c", "echo ran; exit 3")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), subreaperEnv+"=1")
			out, errOut, code := runCmd(t, cmd)
			if code != 0 || !strings.Contains(out, "ran\nexit=3\n") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if !strings.Contains(out, "all ended") {
				t.Fatalf("something warden started was still running 10 s after warden exec exited:\n%s%s", out, errOut)
			}
		})
	}
}
