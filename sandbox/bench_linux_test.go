package sandbox

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkSandboxStartup times /bin/true four ways in one run,
// interleaved so machine noise hits all legs alike: bare; through Warden's
// sandbox (workspace-write, network off) as a long-lived process runs it,
// with a spare helper ready (warden-ms); the same started cold, as a
// one-shot `warden exec` runs it (warden-cold-ms); and through bubblewrap
// with comparable isolation; and warm under network ask (the forwarder to a
// proxy handler: warden-ask-ms, ask-over-off-ms). It reports medians and
// ratios:
//
//	make bench   (or go test -run '^$' -bench SandboxStartup ./sandbox)
//
// Targets: warden/bwrap <= 1.0 and warden-bare under 5 ms. Before each
// leg the benchmark waits until the next spare has started, so no leg is
// timed while a spare competes with it for the CPU.
func BenchmarkSandboxStartup(b *testing.B) {
	ws := b.TempDir()
	bwrap, bwrapErr := exec.LookPath("bwrap")
	if bwrapErr != nil {
		b.Log("bwrap not found: skipping the bubblewrap leg (apt-get install bubblewrap to compare)")
	}
	cmd := Command{Argv: []string{"/bin/true"}, Cwd: ws, Policy: Policy{Mode: WorkspaceWrite, Workspace: []string{ws}}, Helper: testHelper}
	bwrapArgs := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "/bin/true"}

	timeIt := func(f func() error) time.Duration {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	run := func() error {
		res, err := Run(context.Background(), cmd)
		if err == nil && res.ExitCode != 0 {
			b.Fatalf("sandboxed /bin/true: %+v", res)
		}
		return err
	}
	askCmd := cmd
	askCmd.Policy.Network, askCmd.Proxy = NetworkAsk, returnHandler{}
	runAsk := func() error {
		res, err := Run(context.Background(), askCmd)
		if err == nil && res.ExitCode != 0 {
			b.Fatalf("sandboxed /bin/true under ask: %+v", res)
		}
		return err
	}
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	var bare, warden, cold, bw, ask []time.Duration
	// Warm the page cache and start the first spares.
	run()
	runAsk()
	b.ResetTimer()
	for range b.N {
		spares.settle()
		bare = append(bare, timeIt(func() error { return exec.Command("/bin/true").Run() }))
		warden = append(warden, timeIt(run))
		spares.settle()
		coldStartForTest = true
		cold = append(cold, timeIt(run))
		coldStartForTest = false
		spares.settle()
		ask = append(ask, timeIt(runAsk))
		if bwrapErr == nil {
			bw = append(bw, timeIt(func() error { return exec.Command(bwrap, bwrapArgs...).Run() }))
		}
	}
	b.StopTimer()
	mb, mw := median(bare), median(warden)
	b.ReportMetric(ms(mb), "bare-ms")
	b.ReportMetric(ms(mw), "warden-ms")
	b.ReportMetric(ms(mw-mb), "warden-over-bare-ms")
	b.ReportMetric(float64(mw)/float64(mb), "warden/bare")
	ma := median(ask)
	b.ReportMetric(ms(ma), "warden-ask-ms")
	b.ReportMetric(ms(ma-mw), "ask-over-off-ms")
	mc := median(cold)
	b.ReportMetric(ms(mc), "warden-cold-ms")
	if len(bw) > 0 {
		mbw := median(bw)
		b.ReportMetric(ms(mbw), "bwrap-ms")
		b.ReportMetric(float64(mw)/float64(mbw), "warden/bwrap")
		b.ReportMetric(float64(mc)/float64(mbw), "warden-cold/bwrap")
	}
	b.ReportMetric(0, "ns/op") // the medians above are the result
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
