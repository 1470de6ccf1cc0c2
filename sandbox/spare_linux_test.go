package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// withSpares turns spare helpers on for one test.
func withSpares(t *testing.T) {
	t.Helper()
	KeepSpareHelpers(true)
	t.Cleanup(func() { KeepSpareHelpers(false) })
}

// runOnSpare runs c after the spare for it has started and checks that the
// run used it.
func runOnSpare(t *testing.T, ws string, c Command) Result {
	t.Helper()
	spares.settle()
	before := sparesTaken.Load()
	res := run(t, ws, c)
	if sparesTaken.Load() != before+1 {
		t.Fatalf("the run did not use the spare helper")
	}
	return res
}

func idleSpare(t *testing.T) *helperProc {
	t.Helper()
	spares.settle()
	spares.mu.Lock()
	defer spares.mu.Unlock()
	for _, s := range spares.idle {
		return s.h
	}
	t.Fatal("no spare helper is waiting")
	return nil
}

func TestSpareRunsEachCommandInItsOwnPolicy(t *testing.T) {
	withSpares(t)
	first := t.TempDir()
	run(t, first, Command{Argv: []string{"/bin/true"}}) // starts the first spare
	for i := range 3 {
		ws := t.TempDir()
		res := runOnSpare(t, ws, Command{Argv: sh(`pwd; echo hi > mine && cat mine; echo no > "$OTHER/x"; echo "exit $?" >&2; exit 7`),
			Env:    EnvPolicy{Set: map[string]string{"OTHER": first}},
			Policy: Policy{ExcludeTmpdir: true, ExcludeSlashTmp: true}})
		if res.ExitCode != 7 || res.Sandbox != "linux" {
			t.Fatalf("run %d: %+v", i, res)
		}
		if got := string(res.Stdout); got != ws+"\nhi\n" {
			t.Errorf("run %d: stdout %q, want the new workspace and its file", i, got)
		}
		if strings.Contains(string(res.Stderr), "exit 0") || !strings.Contains(string(res.Stderr), "Read-only") {
			t.Errorf("run %d: writing into the first run's workspace was not denied: %q", i, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(first, "x")); err == nil {
			t.Fatalf("run %d wrote into another workspace", i)
		}
	}
}

func TestSpareSeesWhatChangedAfterItStarted(t *testing.T) {
	withSpares(t)
	ws, outside := t.TempDir(), t.TempDir()
	mnt := filepath.Join(outside, "mnt")
	os.Mkdir(mnt, 0o755)
	// Mounts propagate from a shared mount (the usual systemd setup) into
	// the spare's namespace. Make outside one, if this process may mount.
	shared := unix.Mount(outside, outside, "", unix.MS_BIND, "") == nil
	if shared {
		t.Cleanup(func() { unix.Unmount(outside, unix.MNT_DETACH) })
		shared = unix.Mount("", outside, "", unix.MS_SHARED, "") == nil
	}
	run(t, ws, Command{Argv: []string{"/bin/true"}})
	idleSpare(t)
	// A file and a mount made while the spare waits.
	if err := os.WriteFile(filepath.Join(outside, "late"), []byte("late file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mounted := shared && unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m") == nil
	if mounted {
		t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
		os.WriteFile(filepath.Join(mnt, "inside"), []byte("late mount\n"), 0o644)
	}
	res := runOnSpare(t, ws, Command{Argv: sh(`cat "$O/late"; cat "$O/mnt/inside" 2>/dev/null; true`),
		Env: EnvPolicy{Set: map[string]string{"O": outside}}})
	want := "late file\n"
	if mounted {
		want += "late mount\n"
	} else {
		t.Log("cannot mount here: the mount-propagation half is not checked")
	}
	if string(res.Stdout) != want {
		t.Fatalf("the spare's view is stale: got %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
	}
}

func TestDeadSpareIsReplacedByAColdStart(t *testing.T) {
	withSpares(t)
	ws := t.TempDir()
	run(t, ws, Command{Argv: []string{"/bin/true"}})
	h := idleSpare(t)
	h.cmd.Process.Signal(syscall.SIGKILL)
	time.Sleep(50 * time.Millisecond)
	res := run(t, ws, Command{Argv: sh(`echo alive`)})
	if res.ExitCode != 0 || string(res.Stdout) != "alive\n" {
		t.Fatalf("run after the spare died: %+v", res)
	}
}

func TestSpareIsRenewedWhileRunsComeThenEnds(t *testing.T) {
	oldIdle, oldWarm := spareIdle, spareKeepWarm
	spareIdle, spareKeepWarm = 200*time.Millisecond, time.Hour
	t.Cleanup(func() { spareIdle, spareKeepWarm = oldIdle, oldWarm })
	withSpares(t)
	ws := t.TempDir()
	run(t, ws, Command{Argv: []string{"/bin/true"}})
	expired := idleSpare(t).cmd.Process.Pid
	waitGone(t, expired, "an expired spare")
	// Runs came recently: a fresh spare replaced it.
	deadline := time.Now().Add(5 * time.Second)
	for renewed := false; !renewed; {
		spares.settle()
		spares.mu.Lock()
		for _, s := range spares.idle {
			renewed = s.h.cmd.Process.Pid != expired
		}
		spares.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the expired spare was not renewed")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// No run for spareKeepWarm: an expired spare is not renewed.
	spares.mu.Lock()
	spareKeepWarm = 0
	spares.mu.Unlock()
	pid := idleSpare(t).cmd.Process.Pid
	waitGone(t, pid, "an expired spare")
	spares.settle()
	spares.mu.Lock()
	left := len(spares.idle)
	spares.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d spares renewed after runs stopped", left)
	}

	run(t, ws, Command{Argv: []string{"/bin/true"}})
	pid = idleSpare(t).cmd.Process.Pid
	KeepSpareHelpers(false)
	waitGone(t, pid, "a spare after KeepSpareHelpers(false)")
}

// waitGone waits until pid has exited and been reaped.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s (pid %d) is still there", what, pid)
}

func TestPrepareSpareMakesTheFirstRunWarm(t *testing.T) {
	withSpares(t)
	for _, pol := range []Policy{{Mode: WorkspaceWrite}, {Mode: WorkspaceWrite, Network: NetworkOn}, {Mode: DangerFullAccess}} {
		PrepareSpare(pol, testHelper)
		res := runOnSpare(t, t.TempDir(), Command{Argv: sh(`echo "$WARDEN_SANDBOX_NETWORK_DISABLED"`), Policy: pol})
		if res.ExitCode != 0 {
			t.Fatalf("%+v: %+v", pol, res)
		}
		want := map[bool]string{false: "1\n", true: "\n"}[pol.network() == NetworkOn]
		if string(res.Stdout) != want {
			t.Errorf("%+v: network-disabled variable %q, want %q", pol, res.Stdout, want)
		}
	}
}
