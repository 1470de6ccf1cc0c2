//go:build unix

package main

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// killFiles is the size of the change the kill tests interrupt: as many
// updated files as the measurement, plus a file added in a new
// directory and one deleted.
const killFiles = 400

// TestKilledApplyPatchIsAllOrNothing kills `warden apply-patch` of a
// 400-file patch at random moments with SIGKILL; after the next Warden start
// in the workspace every run's files are all old or all new, no temporary
// file is left in the tree, and the journal is gone.
func TestKilledApplyPatchIsAllOrNothing(t *testing.T) {
	k := newKillRig(t, 24, 6)
	run := func(ws string) *exec.Cmd {
		return exec.Command(wardenBin(t), "apply-patch", "--cwd", ws, k.patchFile)
	}
	k.calibrate(t, run, k.oldTree)
	for i := 0; k.more(i); i++ {
		ws := k.oldTree(t)
		journaled, mixed := k.killSomewhere(t, run(ws), ws, i)
		stderr := k.nextStart(t, ws, i)
		k.check(t, i, ws, stderr, journaled, mixed, "")
	}
	k.report(t)
}

// TestKilledUndoIsAllOrNothing does the same to `warden undo` reverting a
// recorded 400-file patch; afterwards its record agrees with the files: a
// finished undo is recorded as undone, a rolled-back one can be done again.
func TestKilledUndoIsAllOrNothing(t *testing.T) {
	k := newKillRig(t, 16, 4)
	run := func(ws string) *exec.Cmd { return exec.Command(wardenBin(t), "undo", "--cwd", ws) }
	k.calibrate(t, run, k.patchedTree)
	for i := 0; k.more(i); i++ {
		ws := k.patchedTree(t)
		journaled, mixed := k.killSomewhere(t, run(ws), ws, i)
		stderr := k.nextStart(t, ws, i)
		state := k.check(t, i, ws, stderr, journaled, mixed, "undo ")
		_, stderr, code := runWarden(t, "undo", "--cwd", ws)
		switch again, _ := k.state(ws); {
		case state == "new" && (code != 0 || again != "old"):
			t.Errorf("run %d: the undo was rolled back, but undoing again exits %d and leaves the tree %s: %.300s", i, code, again, stderr)
		case state == "old" && (code == 0 || !strings.Contains(stderr, "already undone")):
			t.Errorf("run %d: the undo finished, but undoing again exits %d saying %.300q, want its record marked undone", i, code, stderr)
		}
	}
	k.report(t)
}

// TestKilledUndoOfLinksAndDirectoriesIsAllOrNothing kills `warden undo` of
// a command that deleted 400 files, removed a link and retargeted another,
// replaced a file with a link, made a link and empty directories, and
// removed empty directories. After the next start every run's tree is
// all as the command left it or all as before it, links (their targets)
// and empty directories (their modes) included, with no temporary file
// left and no journal; and the record agrees.
func TestKilledUndoOfLinksAndDirectoriesIsAllOrNothing(t *testing.T) {
	k := newKillRig(t, 16, 6)
	run := func(ws string) *exec.Cmd { return exec.Command(wardenBin(t), "undo", "--cwd", ws) }
	k.calibrate(t, run, k.commandTree)
	for i := 0; k.more(i); i++ {
		ws := k.commandTree(t)
		journaled := k.killNodesSomewhere(t, run(ws), i)
		args := []string{"undo", "--list", "--cwd", ws}
		if i%2 == 0 {
			args = []string{"exec", "--cwd", ws, "--yes", "--", "true"}
		}
		_, stderr, _ := runWarden(t, args...)
		state := k.checkNodes(t, i, ws, stderr, journaled)
		_, stderr, code := runWarden(t, "undo", "--cwd", ws)
		switch again, _ := nodeTreeState(ws); {
		case state == "as the command left it" && (code != 0 || again != "as before the command"):
			t.Errorf("run %d: the undo was rolled back, but undoing again exits %d and leaves the tree %s: %.300s", i, code, again, stderr)
		case state == "as before the command" && (code == 0 || !strings.Contains(stderr, "already undone")):
			t.Errorf("run %d: the undo finished, but undoing again exits %d saying %.300q, want its record marked undone", i, code, stderr)
		}
	}
	k.report(t)
}

// nodeScript is the command TestKilledUndoOfLinksAndDirectoriesIsAllOrNothing undoes.
const nodeScript = "rm f*.txt keep swap.txt && rm -rf empty && ln -sfn f002.txt latest && " +
	"ln -s f005.txt swap.txt && ln -s f003.txt made && mkdir -p build/x/y"

// commandTree is a fresh workspace where `warden exec` ran nodeScript,
// recording what it changed.
func (k *killRig) commandTree(t *testing.T) string {
	t.Helper()
	ws := k.oldTree(t)
	for rel, target := range map[string]string{"keep": "f000.txt", "latest": "f001.txt"} {
		if err := os.Symlink(target, filepath.Join(ws, rel)); err != nil {
			t.Fatal(err)
		}
	}
	for rel, mode := range map[string]os.FileMode{"empty/a": 0o755, "empty/b": 0o700} {
		if err := os.MkdirAll(filepath.Join(ws, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(ws, rel), mode)
	}
	if err := os.WriteFile(filepath.Join(ws, "swap.txt"), []byte("swap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runWarden(t, "exec", "--cwd", ws, "--yes", "--", "sh", "-c", nodeScript); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if state, _ := nodeTreeState(ws); state != "as the command left it" {
		t.Fatalf("after the command the tree is %s", state)
	}
	return ws
}

// nodeTreeState says whether ws is as before nodeScript, as it left it,
// or a mix, and lists Warden's temporary files in it.
func nodeTreeState(ws string) (state string, debris []string) {
	before, after := 0, 0
	tally := func(wasBefore, wasAfter bool) {
		if wasBefore {
			before++
		}
		if wasAfter {
			after++
		}
	}
	for i := range killFiles {
		data, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i)))
		tally(string(data) == fmt.Sprintf("old %d\nline two\n", i), os.IsNotExist(err))
	}
	linksTo := func(rel, target string) bool {
		got, err := os.Readlink(filepath.Join(ws, rel))
		return err == nil && got == target
	}
	absent := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(ws, rel))
		return os.IsNotExist(err)
	}
	emptyDir := func(rel string, mode os.FileMode) bool {
		fi, err := os.Lstat(filepath.Join(ws, rel))
		names, _ := os.ReadDir(filepath.Join(ws, rel))
		return err == nil && fi.IsDir() && fi.Mode().Perm() == mode && len(names) == 0
	}
	swap, _ := os.Lstat(filepath.Join(ws, "swap.txt"))
	swapData, _ := os.ReadFile(filepath.Join(ws, "swap.txt"))
	tally(linksTo("keep", "f000.txt"), absent("keep"))
	tally(linksTo("latest", "f001.txt"), linksTo("latest", "f002.txt"))
	tally(swap != nil && swap.Mode().IsRegular() && string(swapData) == "swap\n", linksTo("swap.txt", "f005.txt"))
	tally(absent("made"), linksTo("made", "f003.txt"))
	tally(emptyDir("empty/a", 0o755) && emptyDir("empty/b", 0o700), absent("empty"))
	tally(absent("build"), emptyDir("build/x/y", 0o755))
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".warden-") {
			debris = append(debris, p)
		}
		return nil
	})
	switch all := killFiles + 6; {
	case before == all:
		return "as before the command", debris
	case after == all:
		return "as the command left it", debris
	}
	return fmt.Sprintf("mixed (%d as before the command, %d as it left them)", before, after), debris
}

// killNodesSomewhere starts cmd and kills it with SIGKILL at a random
// moment: in turn after its links' journal appears, after the files'
// commit record does, after the files' intent, and anywhere in the run.
// It reports whether a journal was left.
func (k *killRig) killNodesSomewhere(t *testing.T, cmd *exec.Cmd, run int) (journaled bool) {
	t.Helper()
	mark, window := []string{".nodes", ".commit", ".intent", ""}[run%4], []time.Duration{k.change, k.commit, k.change, k.whole}[run%4]
	if !k.killAfter(t, cmd, mark, window) {
		return false
	}
	return k.journalHas(".intent") || k.journalHas(".nodes")
}

// killAfter starts cmd, waits until the journal holds a file ending in
// mark (none: at once), then kills cmd with SIGKILL at a random moment
// within window. False when cmd ended before the mark appeared.
func (k *killRig) killAfter(t *testing.T, cmd *exec.Cmd, mark string, window time.Duration) bool {
	t.Helper()
	cmd.SysProcAttr = noTerminalAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for mark != "" && !k.journalHas(mark) {
		select {
		case <-done:
			return false
		default:
			time.Sleep(200 * time.Microsecond)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Duration(rand.Int64N(int64(window)))):
		cmd.Process.Kill()
		<-done
	}
	return true
}

// checkNodes asserts one run's outcome after the next start and returns it.
func (k *killRig) checkNodes(t *testing.T, run int, ws, stderr string, journaled bool) string {
	t.Helper()
	state, debris := nodeTreeState(ws)
	k.done++
	k.outcomes[state]++
	if journaled {
		k.journaled[state]++
	}
	if !strings.HasPrefix(state, "as ") {
		t.Errorf("run %d: after the next start the tree is %s; stderr: %.600s", run, state, stderr)
	}
	if len(debris) > 0 {
		t.Errorf("run %d: %d temporary files left in the tree, among them %v", run, len(debris), debris[:min(3, len(debris))])
	}
	if names, _ := os.ReadDir(k.journal); len(names) > 0 {
		t.Errorf("run %d: journal files left: %v", run, names)
	}
	if journaled && !strings.Contains(stderr, "an interrupted undo") {
		t.Errorf("run %d: a journal was left, but the next start did not say what it did: %.300q", run, stderr)
	}
	return state
}

type killRig struct {
	runs, done int
	started    time.Time
	patchFile  string
	journal    string
	// whole is how long an uninterrupted run takes; change how long from
	// its journal's intent to its end, and commit from its commit record:
	// the windows where kills matter.
	whole, change, commit time.Duration
	// Counts by outcome: kills that left an intent behind, and that left
	// the files half renamed.
	journaled, mixed, outcomes map[string]int
}

func newKillRig(t *testing.T, runs, short int) *killRig {
	if testing.Short() {
		runs = short
	}
	k := &killRig{runs: runs, started: time.Now(), journal: patch.JournalDir(), outcomes: map[string]int{}, journaled: map[string]int{}, mixed: map[string]int{}}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for i := range killFiles {
		fmt.Fprintf(&b, "*** Update File: f%03d.txt\n@@\n-old %d\n+new %d\n", i, i, i)
	}
	b.WriteString("*** Add File: added/dir/new.txt\n+added\n*** Delete File: gone.txt\n*** End Patch\n")
	k.patchFile = filepath.Join(t.TempDir(), "big.patch")
	if err := os.WriteFile(k.patchFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

// killBudget bounds a kill test's time on a busy machine: past it, no new
// run starts once killMinRuns are done.
const (
	killBudget  = 18 * time.Second
	killMinRuns = 6
)

func (k *killRig) more(run int) bool {
	return run < k.runs && (run < killMinRuns || time.Since(k.started) < killBudget)
}

// oldTree is a fresh workspace with the files before the patch.
func (k *killRig) oldTree(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range killFiles {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i)), fmt.Appendf(nil, "old %d\nline two\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "gone.txt"), []byte("gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws
}

// patchedTree is a fresh workspace where the patch landed with an undo
// record, as the agent's patches land.
func (k *killRig) patchedTree(t *testing.T) string {
	t.Helper()
	ws := k.oldTree(t)
	text, _ := os.ReadFile(k.patchFile)
	changes, err := patch.Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := patch.Prepare(changes, patch.Disk{}, patch.Options{Root: ws})
	if err != nil {
		t.Fatal(err)
	}
	cps := patch.NewCheckpoints(filepath.Join(config.StateDir(), "checkpoints"))
	if _, err := patch.Apply(context.Background(), patch.Disk{}, plan, cps); err != nil {
		t.Fatal(err)
	}
	return ws
}

// calibrate times a run that is not killed. On a loaded machine the poll
// can miss the commit record's short life; then it tries again, and after
// a few misses it bounds the windows by the whole run (they only choose
// random kill delays).
func (k *killRig) calibrate(t *testing.T, run func(string) *exec.Cmd, tree func(*testing.T) string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		if k.calibrateOnce(t, run(tree(t))) {
			break
		}
		if attempt == 5 {
			k.change, k.commit = k.whole, max(k.whole/4, time.Millisecond)
			t.Logf("the commit record was never seen in %d runs of %v: kill windows bounded by the whole run", attempt, k.whole)
			break
		}
	}
	t.Logf("an uninterrupted run takes %v: %v of it after its journal's intent, %v after its commit record", k.whole, k.change, k.commit)
}

// calibrateOnce runs cmd to its end, timing it, and reports whether it saw
// the journal's intent and commit record on the way.
func (k *killRig) calibrateOnce(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	cmd.SysProcAttr = noTerminalAttr()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var began, committed time.Time
	for committed.IsZero() {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("calibration run: %v", err)
			}
			k.whole = time.Since(start)
			return false
		default:
			if began.IsZero() && k.journalHas(".intent") {
				began = time.Now()
			}
			if k.journalHas(".commit") {
				committed = time.Now()
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("calibration run: %v", err)
	}
	if began.IsZero() {
		began = committed
	}
	k.whole, k.change, k.commit = time.Since(start), time.Since(began), time.Since(committed)
	return true
}

func (k *killRig) journalHas(ext string) bool {
	names, _ := os.ReadDir(k.journal)
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ext) {
			return true
		}
	}
	return false
}

// killSomewhere starts cmd, changing ws, and kills it with SIGKILL at a
// random moment: in turn after its journal's intent appears, after its
// commit record does, after the intent again, and anywhere in the run. It reports whether an intent was left and
// whether some files were left renamed and others not.
func (k *killRig) killSomewhere(t *testing.T, cmd *exec.Cmd, ws string, run int) (journaled bool, mixed bool) {
	t.Helper()
	mark, window := []string{".intent", ".commit", ".intent", ""}[run%4], []time.Duration{k.change, k.commit, k.change, k.whole}[run%4]
	if !k.killAfter(t, cmd, mark, window) {
		return false, false
	}
	return k.journalHas(".intent"), k.halfRenamed(ws)
}

// nextStart starts Warden in the workspace again, in turn through
// apply-patch (of another file), exec and undo --list, and returns its stderr.
func (k *killRig) nextStart(t *testing.T, ws string, run int) string {
	t.Helper()
	var args []string
	switch run % 3 {
	case 0:
		other := filepath.Join(t.TempDir(), "other.patch")
		os.WriteFile(other, []byte("*** Begin Patch\n*** Add File: other.txt\n+other\n*** End Patch\n"), 0o644)
		args = []string{"apply-patch", "--cwd", ws, other}
	case 1:
		args = []string{"exec", "--cwd", ws, "--yes", "--", "true"}
	default:
		args = []string{"undo", "--list", "--cwd", ws}
	}
	_, stderr, _ := runWarden(t, args...)
	return stderr
}

// halfRenamed reports whether some of ws's updated files have their new
// content and others their old.
func (k *killRig) halfRenamed(ws string) bool {
	seen := map[string]bool{}
	for i := range killFiles {
		data, _ := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i)))
		seen[strings.Fields(string(data) + " ?")[0]] = true
	}
	return seen["old"] && seen["new"]
}

// state says whether ws holds the files as before the patch ("old"), as
// after it ("new"), or a mix, and lists Warden's temporary files in it.
func (k *killRig) state(ws string) (state string, debris []string) {
	old, new := 0, 0
	for i := range killFiles {
		switch data, _ := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i))); string(data) {
		case fmt.Sprintf("old %d\nline two\n", i):
			old++
		case fmt.Sprintf("new %d\nline two\n", i):
			new++
		}
	}
	if data, err := os.ReadFile(filepath.Join(ws, "added/dir/new.txt")); err == nil && string(data) == "added\n" {
		new++
	} else if _, err := os.Lstat(filepath.Join(ws, "added")); os.IsNotExist(err) {
		old++
	}
	if info, err := os.Stat(filepath.Join(ws, "gone.txt")); os.IsNotExist(err) {
		new++
	} else if err == nil && info.Mode().Perm() == 0o600 {
		old++
	}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".warden-") {
			debris = append(debris, p)
		}
		return nil
	})
	switch {
	case old == killFiles+2:
		return "old", debris
	case new == killFiles+2:
		return "new", debris
	}
	return fmt.Sprintf("mixed (%d old, %d new)", old, new), debris
}

// check asserts one run's outcome after the next start and returns it.
func (k *killRig) check(t *testing.T, run int, ws, stderr string, journaled, mixed bool, what string) string {
	t.Helper()
	state, debris := k.state(ws)
	k.done++
	k.outcomes[state]++
	if journaled {
		k.journaled[state]++
	}
	if mixed {
		k.mixed[state]++
	}
	if state != "old" && state != "new" {
		t.Errorf("run %d: after the next start the tree is %s; stderr: %.300s", run, state, stderr)
	}
	if len(debris) > 0 {
		t.Errorf("run %d: %d temporary files left in the tree, among them %v", run, len(debris), debris[:min(3, len(debris))])
	}
	if names, _ := os.ReadDir(k.journal); len(names) > 0 {
		t.Errorf("run %d: journal files left: %v", run, names)
	}
	if journaled && !strings.Contains(stderr, "an interrupted "+what) {
		t.Errorf("run %d: a journal was left, but the next start did not say what it did: %.300q", run, stderr)
	}
	return state
}

func (k *killRig) report(t *testing.T) {
	t.Logf("%d runs: outcomes %v; killed with an intent left: %v; of those, files left half renamed: %v", k.done, k.outcomes, k.journaled, k.mixed)
	total := 0
	for _, n := range k.journaled {
		total += n
	}
	if k.done >= killMinRuns && total == 0 {
		t.Errorf("no run was killed while its change was in progress: the test proves nothing")
	}
}

// interruptedPatch is a workspace where apply-patch was killed as its
// intent appeared: a journal to settle.
func interruptedPatch(t *testing.T) (*killRig, string) {
	t.Helper()
	k := newKillRig(t, 1, 1)
	k.whole, k.change = time.Nanosecond, time.Nanosecond // kill as the intent appears
	for try := 0; ; try++ {
		ws := k.oldTree(t)
		if journaled, _ := k.killSomewhere(t, exec.Command(wardenBin(t), "apply-patch", "--cwd", ws, k.patchFile), ws, 0); journaled {
			return k, ws
		}
		if try == 3 {
			t.Fatal("apply-patch ended before it could be killed, 4 times")
		}
	}
}

// settled checks that ws's interrupted patch was settled (when says when):
// the tree all old or all new, no temporary file, no journal left.
func (k *killRig) settled(t *testing.T, ws, when string) {
	t.Helper()
	if state, debris := k.state(ws); (state != "old" && state != "new") || len(debris) > 0 {
		t.Errorf("%s the tree is %s, with %d temporary files", when, state, len(debris))
	}
	if names, _ := os.ReadDir(k.journal); len(names) > 0 {
		t.Errorf("journal files left: %v", names)
	}
}

// TestServeSettlesAnInterruptedPatch: `warden serve` settles, at
// initialize, the change a killed apply-patch left in its workspace folder,
// and tells the user with window/showMessage.
func TestServeSettlesAnInterruptedPatch(t *testing.T) {
	k, ws := interruptedPatch(t)
	c := lsptest.Start(t, lsptest.Options{Bin: wardenBin(t), Dir: ws, Env: []string{"XDG_STATE_HOME=" + os.Getenv("XDG_STATE_HOME")}})
	c.Initialize(nil)
	c.WaitFor("window/showMessage", lsptest.MessageContains("an interrupted patch in "+ws))
	k.settled(t, ws, "after serve started")
	c.Shutdown()
}

// TestServeSettlesAnInterruptedPatchInAFolderAddedLater: a folder opened
// after initialize (workspace/didChangeWorkspaceFolders) is settled as the
// first ones are, and the user is told at once.
func TestServeSettlesAnInterruptedPatchInAFolderAddedLater(t *testing.T) {
	k, ws := interruptedPatch(t)
	c := lsptest.Start(t, lsptest.Options{Bin: wardenBin(t), Env: []string{"XDG_STATE_HOME=" + os.Getenv("XDG_STATE_HOME")}})
	c.Initialize(nil)
	if names, _ := os.ReadDir(k.journal); len(names) == 0 {
		t.Fatal("the journal was settled before its folder was opened: initialize recovered every workspace's changes")
	}
	c.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": c.URI(ws), "name": filepath.Base(ws)}}, "removed": []any{},
	}})
	c.WaitFor("window/showMessage", lsptest.MessageContains("an interrupted patch in "+ws))
	k.settled(t, ws, "after the folder was added")
	c.Shutdown()
}
