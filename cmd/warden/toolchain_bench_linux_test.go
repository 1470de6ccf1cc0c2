package main

import (
	"os"
	"os/exec"
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
	sandboxedRun() // warm both caches
	plainRun()
	var sb, plain time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		sandboxedRun()
		sb += time.Since(start)
		start = time.Now()
		plainRun()
		plain += time.Since(start)
	}
	b.ReportMetric(float64(sb.Milliseconds())/float64(b.N), "sandboxed-ms/op")
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "plain-ms/op")
	b.ReportMetric(float64(sb)/float64(plain), "ratio")
}
