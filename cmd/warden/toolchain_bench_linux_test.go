package main

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkToolchainGoTestWarm compares a warm sandboxed `go test ./...` of
// a small module (through warden exec, private caches) with the same
// command run unsandboxed against the user's warm cache, in the same run.
// Target: sandboxed within 1.5× (reported as the ratio metric).
func BenchmarkToolchainGoTestWarm(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go")
	}
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	home, ws := toolHome(b), goModule(b)
	env := toolEnv(home)
	sandboxedRun := func() {
		cmd := exec.Command(bin, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "go", "test", "./...")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sandboxed go test: %v\n%s", err, out)
		}
	}
	plainRun := func() {
		cmd := exec.Command("go", "test", "./...")
		cmd.Dir, cmd.Env = ws, append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go test: %v\n%s", err, out)
		}
	}
	// The sandbox's own start, one-shot as above: where the extra goes.
	launchRun := func() {
		cmd := exec.Command(bin, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "true")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sandboxed true: %v\n%s", err, out)
		}
	}
	sandboxedRun() // warm both caches
	plainRun()
	var sb, plain, launch time.Duration
	var ratios []float64
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	b.ResetTimer()
	for range b.N {
		s, p := timed(sandboxedRun), timed(plainRun)
		sb, plain, launch = sb+s, plain+p, launch+timed(launchRun)
		ratios = append(ratios, float64(s)/float64(p))
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(sb.Milliseconds())/float64(b.N), "sandboxed-ms/op")
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "plain-ms/op")
	b.ReportMetric(float64(launch.Milliseconds())/float64(b.N), "exec-true-ms/op")
	b.ReportMetric(float64(sb)/float64(plain), "ratio")
	// Pairs run back to back share the machine's load of the moment; their
	// median ratio is less at the mercy of one slow run on a busy machine.
	b.ReportMetric(ratios[len(ratios)/2], "median-pair-ratio")
}
