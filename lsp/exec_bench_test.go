package lsp_test

import (
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// bareBwrap is the baseline of issue 15's warm-path target: the cheapest
// namespace sandbox start of /bin/true, with no policy and no audit.
var bareBwrap = []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "/bin/true"}

// Where the time goes (issue 15), inside the server, from the executeCommand
// request to the result's showMessage: medians of 137 runs per build, the
// builds alternating in one session at load average 2.6-3.2 on 2 shared
// cores (a timestamp at each step, a few µs each). Before → after, ms:
//
//	LSP and policy: the progress token round trip 0.28 (kept: the job
//	  waits for window/workDoneProgress/create so that Neovim, which blocks
//	  in a dialog, shows the job while the user decides); Orchestrator()
//	  0.11, evaluation 0.06: 0.81 in all
//	audit fsync before the run: 0.34 on the path → 0 (it runs beside the
//	  launcher's set-up; the helper execs the command only after it)
//	launcher set-up: caches and roots 0.29-0.33, secrets 0.08, the
//	  protected-path guard 0.57-0.62, sockets/repos/masks 0.08: 1.42 → 1.48
//	helper: spec 0.32-0.36, mounts 0.80-0.87, Landlock 0.26 → 0.05 (the
//	  read and device rules are built in the spare), seccomp 0.12, exec
//	  0.34-0.36: 2.18 → 2.07
//	/bin/true, reaping, quarantine check: 1.12 → 1.05
//	audit fsync after the run: 0.86 → 0.32-0.43 (the next spare helper no
//	  longer starts beside it, but once the result is out: RefillSpares)
//	result message: 0.12-0.24 → 0.06-0.15
//	total: 7.69 → 5.88 (6.2 with the token round trip kept); benchmark p50 7.7-8.4 → 6.0-6.4 ms, 1.46-1.60× →
//	  1.14-1.20× bwrap in the same runs
//	then a memo per run of the launcher's path lookups (roots, secrets,
//	  the guard's first look share each Lstat: internal/pathmemo) and the
//	  approvals' patterns compiled on first use: 1.05-1.10× → 1.00-1.04×
//	  bwrap (three alternated rounds of 40, load average 1.7-2.1)
//
//	then (a later session, marks from the executeCommand request, 60 runs):
//	  the job no longer waits for the progress token's answer (0.3-0.5);
//	  the guard's watches take hold while the helper decodes and mounts,
//	  the go still waiting for them; the spec leaves out the missing
//	  protected paths (13 → 3.3 KB). Now: request to job 0.3, policy 0.3,
//	  launcher 1.1 (roots 0.5, sockets and repositories 0.2, the guard's
//	  look 0.3), helper 1.0 (wake and decode 0.45, mounts 0.2-0.4,
//	  Landlock and seccomp 0.3), /bin/true started and reaped 1.0-1.2,
//	  check after the run 0.35, fsync 0.3, message 0.15: 4.9 in the
//	  server; 0.93-0.96× bwrap against 0.95-1.06× for the build before
//
// The target (0.5×) needs the launcher's set-up and the helper's (2 ms
// together) off the path: a spare whose sandbox is built for the policy
// and used only after a check, by change notification rather than by
// looking, that its inputs are unchanged (see docs/performance.md).
//
// BenchmarkExecWarm is issue 15's warm path, end to end through the real
// binary: from the warden.exec request for /bin/true (allowed by the policy,
// run in the sandbox, every audit line durable) to the result message in the
// editor. Target: p50 under 0.5× a bare bwrap start of /bin/true, measured
// next to each sample so both see the same load.
//
// BenchmarkExecWarmGit is the same in a git workspace, as most are: the run
// also holds placeholders for the git dir's missing entries and releases
// them after (see sandbox's gitmask_linux.go).
func BenchmarkExecWarm(b *testing.B) { benchExecWarm(b, false) }

func BenchmarkExecWarmGit(b *testing.B) { benchExecWarm(b, true) }

func benchExecWarm(b *testing.B, git bool) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Log("bwrap is not installed: the bare-bwrap baseline is skipped")
	}
	dir := b.TempDir()
	if git {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v\n%s", err, out)
		}
	}
	c := lsptest.Start(b, lsptest.Options{Dir: dir})
	c.Initialize(map[string]any{"approvalPolicy": "on-request", "sandboxMode": "workspace-write"})
	c.OnRequest("window/showMessageRequest", func(params json.RawMessage) (any, *lsptest.RPCError) {
		b.Errorf("/bin/true asked for approval: %s", params)
		return nil, nil
	})
	run := func() time.Duration {
		mark := c.Mark()
		t0 := time.Now()
		if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"/bin/true"}}); err != nil {
			b.Fatal(err)
		}
		c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("`/bin/true` exited 0 (sandboxed)"))
		d := time.Since(t0)
		c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
		return d
	}
	bare := func() time.Duration {
		t0 := time.Now()
		if out, err := exec.Command(bwrap, bareBwrap...).CombinedOutput(); err != nil {
			b.Fatalf("bare bwrap: %v\n%s", err, out)
		}
		return time.Since(t0)
	}
	// The first runs pay for cold caches and first-use setup.
	for range 3 {
		run()
	}
	var lat, base []time.Duration
	b.ResetTimer()
	for range b.N {
		lat = append(lat, run())
		if bwrap != "" {
			b.StopTimer()
			// The run's end starts the next spare helper: let it come up
			// first, so the baseline is not timed beside it.
			time.Sleep(20 * time.Millisecond)
			base = append(base, bare())
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	if bwrap != "" {
		b.ReportMetric(ms(percentile(base, 0.5)), "bwrap-p50-ms")
		b.ReportMetric(ms(percentile(base, 0.99)), "bwrap-p99-ms")
		b.ReportMetric(float64(percentile(lat, 0.5))/float64(percentile(base, 0.5)), "x-bwrap-p50")
	}
}
