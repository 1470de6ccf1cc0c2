package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkExecOneShot times a one-shot `warden exec -- true` with the
// defaults (workspace-write, network ask, a git workspace in a temporary
// directory) against a bare bubblewrap start of /bin/true, interleaved
// sample by sample so both see the machine's load of the moment. Target
// (issue 15): p50 under 2× bwrap's (the x-bwrap-p50 metric).
func BenchmarkExecOneShot(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("no bwrap for the baseline")
	}
	base := b.TempDir()
	ws := filepath.Join(base, "ws")
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, v := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		d := filepath.Join(base, v)
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
		env = append(env, v+"="+d)
	}
	run := func(argv ...string) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = ws, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
		return d
	}
	wardenRun := func() time.Duration { return run(bin, "exec", "--", "true") }
	bwrapRun := func() time.Duration {
		return run(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "/bin/true")
	}
	wardenRun() // the first run creates the state directory
	bwrapRun()
	var w, bw []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			w, bw = append(w, wardenRun()), append(bw, bwrapRun())
		} else {
			bw, w = append(bw, bwrapRun()), append(w, wardenRun())
		}
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	wp, bp := p50(w), p50(bw)
	b.ReportMetric(wp, "exec-p50-ms")
	b.ReportMetric(bp, "bwrap-p50-ms")
	b.ReportMetric(wp/bp, "x-bwrap-p50")
}
