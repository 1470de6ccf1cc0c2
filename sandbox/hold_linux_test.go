package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/guard"
)

// A one-shot launcher's early helper (PrepareRun, workspace-write) keeps the
// launcher's notification group and a pidfd of the launcher once the command
// has ended, and waits for the launcher's end: the launcher's exit then only
// drops a reference to the group instead of waiting for its teardown. The
// command sees neither descriptor. Twin: the helper of a run that was not
// prepared holds nothing and ends with its command.
func TestEarlyHelperHoldsTheGroupUntilTheLauncherEnds(t *testing.T) {
	if !namespacesUsable() {
		t.Skip("no user namespaces here: only a namespaced run holds")
	}
	KeepSpareHelpers(false) // a one-shot process: its watches do not linger
	ws := t.TempDir()
	pol := Policy{Workspace: []string{ws}, Network: NetworkOff, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	if guard.HoldGroup() == nil {
		t.Skip("no fanotify group here: nothing to hand over")
	}
	// What the command can reach: its own descriptors, and pid 1's (the helper's).
	probe := sh(`for f in /proc/self/fd/*; do readlink "$f"; done; for f in /proc/1/fd/*; do readlink "$f" >/dev/null 2>&1 && echo helper-fds-visible; done; exit 0`)

	PrepareRun(pol, testHelper)
	held := startAndWait(t, ws, pol, probe)
	if strings.Contains(held.out, "fanotify") || strings.Contains(held.out, "pidfd") || strings.Contains(held.out, "helper-fds-visible") {
		t.Fatalf("the command reached the held descriptors:\n%s", held.out)
	}
	if !alive(held.pid) {
		t.Fatalf("the early helper ended with its command: it holds nothing for the launcher's exit")
	}
	links := fdLinks(t, held.pid)
	if !strings.Contains(links, "anon_inode:[fanotify]") || !strings.Contains(links, "anon_inode:[pidfd]") {
		t.Fatalf("the early helper does not hold the group and the launcher's pidfd: %s", links)
	}
	syscallKill(held.pid)

	// Twin: not prepared, so no hold: the helper ends once it has reported.
	plain := startAndWait(t, ws, pol, probe)
	deadline := time.Now().Add(10 * time.Second)
	for alive(plain.pid) {
		if time.Now().After(deadline) {
			t.Fatalf("a helper that holds nothing outlived its command: %s", fdLinks(t, plain.pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type ended struct {
	pid int
	out string
}

func startAndWait(t *testing.T, ws string, pol Policy, argv []string) ended {
	t.Helper()
	p, err := Start(context.Background(), Command{Argv: argv, Cwd: ws, Policy: pol, Helper: testHelper})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Wait()
	if res.ExitCode != 0 {
		t.Fatalf("%+v\n%s", res, res.Output)
	}
	return ended{p.cmd.Process.Pid, string(res.Output)}
}

// alive says whether pid runs (a zombie, or no process, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func fdLinks(t *testing.T, pid int) string {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var links []string
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			links = append(links, l)
		}
	}
	return strings.Join(links, " ")
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
