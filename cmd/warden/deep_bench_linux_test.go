package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkExecOneShotLargeTree times a one-shot `warden exec` that writes
// one file, in a repository of 100,000 files (10,420 directories) and in a
// small one, interleaved, each with its own state directory: the first run
// in each (cold: no scan store) and the medians after (warm: the store
// lists only the directories that changed, the check after the run too).
//
//	make build && WARDEN_BIN=$PWD/bin/warden go test -run '^$' -bench ExecOneShotLargeTree -benchtime 20x ./cmd/warden
func BenchmarkExecOneShotLargeTree(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	base := b.TempDir()
	small, large := filepath.Join(base, "small"), filepath.Join(base, "large")
	for _, ws := range []string{small, large} {
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v\n%s", err, out)
		}
	}
	for a := range 20 {
		for m := range 20 {
			for c := range 25 {
				leaf := filepath.Join(large, fmt.Sprintf("p%02d/m%02d/s%02d", a, m, c))
				if err := os.MkdirAll(leaf, 0o755); err != nil {
					b.Fatal(err)
				}
				for f := range 10 {
					if err := os.WriteFile(filepath.Join(leaf, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	envFor := func(ws string) []string {
		env := []string{"PATH=" + os.Getenv("PATH")}
		for _, v := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
			d := filepath.Join(base, filepath.Base(ws)+"-"+v)
			if err := os.MkdirAll(d, 0o700); err != nil {
				b.Fatal(err)
			}
			env = append(env, v+"="+d)
		}
		return env
	}
	envs := map[string][]string{small: envFor(small), large: envFor(large)}
	run := func(ws string) time.Duration {
		script := "echo x > out.txt"
		if ws == large {
			script = "echo x > p19/m19/s24/out.txt"
		}
		cmd := exec.Command(bin, "exec", "--", "sh", "-c", script)
		cmd.Dir, cmd.Env = ws, envs[ws]
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		// The one line exec may print says what the command changed (undo).
		if err != nil || len(out) != 0 && (!strings.HasPrefix(string(out), "warden exec: ") || strings.Count(string(out), "\n") != 1) {
			b.Fatalf("warden exec in %s: %v\n%s", ws, err, out)
		}
		return d
	}
	time.Sleep(1100 * time.Millisecond) // the store records directories older than a second
	coldSmall, coldLarge := run(small), run(large)
	var ws, wl []time.Duration
	b.ResetTimer()
	for range b.N {
		ws = append(ws, run(small))
		wl = append(wl, run(large))
	}
	b.StopTimer()
	b.ReportMetric(msOf(coldSmall), "cold-small-ms")
	b.ReportMetric(msOf(coldLarge), "cold-large-ms")
	b.ReportMetric(medianMs(ws), "warm-small-ms")
	b.ReportMetric(medianMs(wl), "warm-large-ms")
	b.ReportMetric(medianMs(wl)/medianMs(ws), "x-small")
	b.ReportMetric(0, "ns/op")
}
