package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/guard"
)

// In a process that keeps spare helpers a watch outlives its run (the next
// run reuses it, issue 15's warm path), but must follow a directory replaced
// between runs, and must move nothing while no run is active. A one-shot
// process keeps none (closing the instance with a watch would cost it).
func TestQuarantineLingeringWatch(t *testing.T) {
	oneShot := t.TempDir()
	if res := run(t, oneShot, Command{Argv: []string{"/bin/true"}, Policy: Policy{Workspace: []string{oneShot}, ExcludeSlashTmp: true, ExcludeTmpdir: true}}); res.ExitCode != 0 {
		t.Fatalf("one-shot run: %+v", res)
	}
	if guard.Lingering(oneShot) {
		t.Fatal("a watch lingered without KeepSpareHelpers")
	}
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	if res := run(t, ws, Command{Argv: []string{"/bin/true"}, Policy: pol}); res.ExitCode != 0 {
		t.Fatalf("first run: %+v", res)
	}
	if !guard.Lingering(ws) {
		t.Fatalf("the watch on %s did not linger after the run", ws)
	}

	// Twin: with no run active, a protected name made by the user stays.
	if err := os.WriteFile(filepath.Join(ws, ".envrc"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Lstat(filepath.Join(ws, ".envrc")); err != nil {
		t.Fatalf("a lingering watch moved the user's own .envrc: %v", err)
	}

	// Attack: the workspace is replaced by a new directory (new inode), and
	// the next run creates a protected name there: moved away while it runs.
	if err := os.Rename(ws, filepath.Join(parent, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := Start(ctx, Command{Argv: sh(`mkdir .git; echo '[core]' > .git/config; echo started > started; sleep 30`),
		Cwd: ws, Helper: testHelper, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, started := os.Stat(filepath.Join(ws, "started"))
		_, git := os.Lstat(filepath.Join(ws, ".git"))
		if started == nil && os.IsNotExist(git) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(".git in the replaced workspace is still there while the command runs")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-p.done:
		t.Fatal("the command ended before the check: the removal was not seen while it ran")
	default:
	}
	cancel()
	p.Wait()
}
