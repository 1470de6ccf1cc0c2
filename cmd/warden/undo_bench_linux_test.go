package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// BenchmarkExecRecordedLargeTree times a one-shot `warden exec` that
// writes one file in a committed repository of 20,000 and of 100,000
// files, with the record of what commands change on (the default) and off
// (record_changes = false), interleaved so both see the machine's load of
// the moment:
//
//	make build && WARDEN_BIN=$PWD/bin/warden go test -run '^$' -bench ExecRecordedLargeTree -benchtime 10x ./cmd/warden
//
// first-*-ms is the first run (no stat cache, the store empty), *-ms the
// medians after, x-off on over off (target: under 3); disk-bytes/run is
// what the undo history grew by per run.
func BenchmarkExecRecordedLargeTree(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			base := b.TempDir()
			ws := filepath.Join(base, "ws")
			committedRepo(b, ws, n)
			on, off := recordEnvs(base)
			i := 0
			run := func(env []string) time.Duration {
				i++
				cmd := exec.Command(bin, "exec", "--", "sh", "-c", fmt.Sprintf("echo %d > d000/out.txt", i))
				cmd.Dir, cmd.Env = ws, env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				d := time.Since(start)
				if err != nil {
					b.Fatalf("warden exec: %v\n%s", err, out)
				}
				return d
			}
			firstOn, firstOff := run(on), run(off)
			history := filepath.Join(base, "on", "XDG_STATE_HOME", "warden", "checkpoints")
			before := dirBytes(history)
			var dOn, dOff []time.Duration
			b.ResetTimer()
			for range b.N {
				dOn, dOff = append(dOn, run(on)), append(dOff, run(off))
			}
			b.StopTimer()
			b.ReportMetric(msOf(firstOn), "first-on-ms")
			b.ReportMetric(msOf(firstOff), "first-off-ms")
			reportOnOff(b, dOn, dOff)
			b.ReportMetric(float64(dirBytes(history)-before)/float64(b.N), "disk-bytes/run")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkServeFirstRecordedRun times the first command an editor's
// server runs after it starts, one that writes one file in a committed
// repository of 20,000 and of 100,000 files, with the record of what
// commands change on and off: each iteration starts `warden serve`
// afresh, initializes it with the repository as its folder and, after a
// pause (think: none, the command sent at once; 2s, about the least a
// model takes to answer the first request), runs the command through
// warden.exec and waits for its outcome.
//
//	make build && WARDEN_BIN=$PWD/bin/warden go test -run '^$' -bench ServeFirstRecordedRun -benchtime 5x ./cmd/warden
//
// x-off is the median with recording over the median without.
func BenchmarkServeFirstRecordedRun(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	for _, n := range []int{20_000, 100_000} {
		ws := filepath.Join(b.TempDir(), "ws")
		committedRepo(b, ws, n)
		for _, think := range []time.Duration{0, 2 * time.Second} {
			b.Run(fmt.Sprintf("%d/think=%s", n, think), func(b *testing.B) {
				offConfig := b.TempDir()
				os.MkdirAll(filepath.Join(offConfig, "warden"), 0o700)
				os.WriteFile(filepath.Join(offConfig, "warden", "config.toml"), []byte("record_changes = false\n"), 0o600)
				i := 0
				run := func(record bool) time.Duration {
					i++
					var env []string
					if !record {
						env = []string{"XDG_CONFIG_HOME=" + offConfig}
					}
					c := lsptest.Start(b, lsptest.Options{Bin: bin, Dir: ws, Env: env, Timeout: 60 * time.Second})
					defer c.Shutdown()
					c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
					c.Initialize(nil)
					time.Sleep(think)
					mark := c.Mark()
					start := time.Now()
					if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"sh", "-c", fmt.Sprintf("echo %d > d000/out.txt", i)}}); err != nil {
						b.Fatalf("warden.exec: %v", err)
					}
					c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: `"))
					return time.Since(start)
				}
				var dOn, dOff []time.Duration
				b.ResetTimer()
				for range b.N {
					dOn, dOff = append(dOn, run(true)), append(dOff, run(false))
				}
				b.StopTimer()
				reportOnOff(b, dOn, dOff)
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// committedRepo is a git repository of n small committed files, in
// directories of 100.
func committedRepo(b *testing.B, ws string, n int) {
	b.Helper()
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
}

// reportOnOff reports the medians of runs with the record on and off, and
// their ratio.
func reportOnOff(b *testing.B, on, off []time.Duration) {
	b.ReportMetric(medianMs(on), "on-ms")
	b.ReportMetric(medianMs(off), "off-ms")
	b.ReportMetric(medianMs(on)/medianMs(off), "x-off")
}

// recordEnvs are the environments of a run with the record on and of one
// with it off (record_changes = false), each with its own home and state
// under base.
func recordEnvs(base string) (on, off []string) {
	envFor := func(name string, record bool) []string {
		env := []string{"PATH=" + os.Getenv("PATH")}
		for _, v := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
			d := filepath.Join(base, name, v)
			os.MkdirAll(d, 0o700)
			env = append(env, v+"="+d)
		}
		if !record {
			os.MkdirAll(filepath.Join(base, name, "XDG_CONFIG_HOME", "warden"), 0o700)
			os.WriteFile(filepath.Join(base, name, "XDG_CONFIG_HOME", "warden", "config.toml"), []byte("record_changes = false\n"), 0o600)
		}
		return env
	}
	return envFor("on", true), envFor("off", false)
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkExecRecordedManyChanges is what the record costs a command that
// changes much: in a committed repository of 20,000 files, a `warden exec`
// that appends to 1,000 committed files and creates 1,000 new ones, with
// the record on and off. Where the sandbox reports each change, every one
// is a round trip to Warden before the call goes on: per-change-us is the
// difference spread over the 2,000 changes.
func BenchmarkExecRecordedManyChanges(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	base := b.TempDir()
	ws := filepath.Join(base, "ws")
	committedRepo(b, ws, 20_000)
	on, off := recordEnvs(base)
	i := 0
	run := func(env []string) time.Duration {
		i++
		script := fmt.Sprintf(`for f in d00?/*.go; do echo "// %d" >> "$f"; done; mkdir gen%d; for n in $(seq 1000); do echo $n > gen%d/f$n; done`, i, i, i)
		cmd := exec.Command(bin, "exec", "--", "sh", "-c", script)
		cmd.Dir, cmd.Env = ws, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("warden exec: %v\n%s", err, out)
		}
		return d
	}
	var dOn, dOff []time.Duration
	b.ResetTimer()
	for range b.N {
		dOn, dOff = append(dOn, run(on)), append(dOff, run(off))
	}
	b.StopTimer()
	reportOnOff(b, dOn, dOff)
	b.ReportMetric((medianMs(dOn)-medianMs(dOff))*1000/2000, "per-change-us")
	b.ReportMetric(0, "ns/op")
}
