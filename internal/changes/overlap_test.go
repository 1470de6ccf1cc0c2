package changes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two runs at once in one root (the server runs an agent's command beside
// a user's) each say they ran beside the other; a run after both ended
// does not; a run whose Warden died is forgotten, not counted.
func TestRecorderOverlappingRunsSaySo(t *testing.T) {
	root := t.TempDir()
	store := OpenStore(t.TempDir())
	rec := &Recorder{Store: store, Keep: true}
	a := rec.BeginRun([]string{root}, "`slow`")
	b := rec.BeginRun([]string{root}, "`quick`")
	write(t, root, "quick.txt", "q\n", 0o644)
	quick := b.Finish()[0]
	write(t, root, "slow.txt", "s\n", 0o644)
	slow := a.Finish()[0]
	if len(slow.Overlapped) != 1 || !strings.HasPrefix(slow.Overlapped[0], "`quick` (from ") {
		t.Errorf("the slow run should name the quick one: %q", slow.Overlapped)
	}
	if len(quick.Overlapped) != 1 || !strings.Contains(quick.Overlapped[0], "`slow` (from ") || !strings.Contains(quick.Overlapped[0], "still running") {
		t.Errorf("the quick run should name the slow one, still running: %q", quick.Overlapped)
	}
	if got := slow.String(); !strings.Contains(got, "created quick.txt, slow.txt; ran at the same time as `quick`") {
		t.Errorf("the slow run's description: %q", got)
	}

	dead := &runEntry{ID: "dead", PID: 1 << 30, Label: "`crashed`", Start: time.Now()}
	store.writeRun(mustResolve(t, root), dead)
	alone := rec.BeginRun([]string{root}, "`alone`")
	write(t, root, "alone.txt", "a\n", 0o644)
	if ch := alone.Finish()[0]; len(ch.Overlapped) != 0 {
		t.Errorf("a run after the others ended, beside a dead one, overlapped %q", ch.Overlapped)
	}
	if _, err := os.Stat(filepath.Join(store.runsDir(mustResolve(t, root)), "dead.json")); !os.IsNotExist(err) {
		t.Errorf("the dead run is still registered: %v", err)
	}
}
