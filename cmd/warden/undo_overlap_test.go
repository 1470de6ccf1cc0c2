//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ATTACK: two commands run at once in one workspace (an agent's beside a
// user's, a watcher): the slow one's record is the difference between a
// look before it and one after, so it holds what the quick one wrote
// meanwhile, and undoing it threw the quick one's work away. Each record
// must say it ran beside the other, and undo must refuse, naming the other
// command, leaving both commands' files; --force reverts both (in one step
// from a listing's record, in two from records the sandbox reported).
// TWIN: a command that ran alone is undone as before (the other tests).
func TestUndoRefusesARunThatOverlappedAnother(t *testing.T) {
	w := newCommandWorkspace(t)
	slow := exec.Command(wardenBin(t), "exec", "--cwd", w.dir, "--", "sh", "-c", "sleep 2; echo slow > slow.txt")
	var slowErr bytes.Buffer
	slow.Stderr = &slowErr
	slow.SysProcAttr = noTerminalAttr()
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the slow one has looked, and sleeps
	_, quickErr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "echo quick > quick.txt")
	if err := slow.Wait(); err != nil || code != 0 {
		t.Fatalf("exec: %v, %d\n%s%s", err, code, slowErr.String(), quickErr)
	}
	for name, line := range map[string]string{"slow": slowErr.String(), "quick": quickErr} {
		if !strings.Contains(line, "ran at the same time as `") || !strings.Contains(line, "warden undo --force") {
			t.Errorf("the %s command's line should say it ran beside the other, and that undo needs --force:\n%s", name, line)
		}
	}
	if !strings.Contains(slowErr.String(), "echo quick > quick.txt") {
		t.Errorf("the slow command's line should name the quick one:\n%s", slowErr.String())
	}

	_, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 1 || !strings.Contains(stderr, "echo quick > quick.txt") || !strings.Contains(stderr, "warden undo --force") {
		t.Fatalf("undo of the slow command should refuse, naming the quick one and --force: exit %d\n%s", code, stderr)
	}
	for _, rel := range []string{"slow.txt", "quick.txt"} {
		if _, err := os.Stat(filepath.Join(w.dir, rel)); err != nil {
			t.Errorf("a refused undo removed %s: %v", rel, err)
		}
	}
	if stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--force"); code != 0 {
		t.Fatalf("undo --force: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "slow.txt")); !os.IsNotExist(err) {
		t.Errorf("undo --force should have reverted the slow command's slow.txt: %v", err)
	}
	// Where the sandbox reports each change, the slow command's record
	// holds its own file only, and the quick one is undone next.
	if _, err := os.Stat(filepath.Join(w.dir, "quick.txt")); err == nil {
		if stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--force"); code != 0 {
			t.Fatalf("second undo --force: exit %d\n%s%s", code, stdout, stderr)
		}
	}
	for _, rel := range []string{"slow.txt", "quick.txt"} {
		if _, err := os.Stat(filepath.Join(w.dir, rel)); !os.IsNotExist(err) {
			t.Errorf("undo --force should have reverted both commands' %s: %v", rel, err)
		}
	}
	w.check("after undo --force")
}
