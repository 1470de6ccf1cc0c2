package sandbox

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkOneFileWriteLargeTree times a sandboxed run that writes one
// file deep in a monorepo of 100,000 files (10,420 directories, nested
// repositories and protected names six levels down) against the same run
// in a small repository, in one process that keeps spare helpers (as the
// server and `warden run` do: the index serves the workspace), interleaved
// so both see the same load:
//
//	go test -run '^$' -bench OneFileWriteLargeTree -benchtime 40x ./sandbox
//
// cold-*-ms is the first run in each tree (the index built); warm-*-ms the
// medians after. Target: warm-large within 1.5× warm-small (x-small).
func BenchmarkOneFileWriteLargeTree(b *testing.B) {
	small, large := b.TempDir(), b.TempDir()
	for _, ws := range []string{small, large} {
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v %s", err, out)
		}
	}
	makeBigTree(b, large, true)
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	run := func(ws string) time.Duration {
		c := Command{Argv: sh(`echo x > pkg19/mod19/src24/out.txt`), Cwd: ws, Helper: testHelper,
			Policy: Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}}
		if ws == small {
			c.Argv = sh(`echo x > out.txt`)
		}
		spares.settle()
		start := time.Now()
		res, err := Run(context.Background(), c)
		d := time.Since(start)
		if err != nil || res.ExitCode != 0 || len(res.Removed) != 0 || len(res.NotEnforced) != 0 {
			b.Fatalf("run in %s: %v %+v %s", ws, err, res, res.Output)
		}
		return d
	}
	coldSmall, coldLarge := run(small), run(large)
	var ws, wl []time.Duration
	b.ResetTimer()
	for range b.N {
		ws = append(ws, run(small))
		wl = append(wl, run(large))
	}
	b.StopTimer()
	b.ReportMetric(ms(coldSmall), "cold-small-ms")
	b.ReportMetric(ms(coldLarge), "cold-large-ms")
	b.ReportMetric(ms(median(ws)), "warm-small-ms")
	b.ReportMetric(ms(median(wl)), "warm-large-ms")
	b.ReportMetric(float64(median(wl))/float64(median(ws)), "x-small")
	b.ReportMetric(0, "ns/op")
}
