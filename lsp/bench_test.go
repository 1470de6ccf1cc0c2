package lsp_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// Targets (issue 2): initialize round trip from process start < 20 ms
// median; codeAction on a 10,000-line document while a job waits on the
// client p99 < 2 ms; RSS after initialize with 100 open documents < 25 MB.
// Each reports a baseline measured in the same run.

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkInitialize times process start → initialize answered. The
// baseline is the same binary's `warden version` run to completion.
func BenchmarkInitialize(b *testing.B) {
	bin := lsptest.Binary(b)
	var base []time.Duration
	for range 20 {
		t0 := time.Now()
		if err := exec.Command(bin, "version").Run(); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(t0))
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		c := lsptest.Start(b, lsptest.Options{Bin: bin})
		c.Initialize(nil)
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		c.Shutdown()
		b.StartTimer()
	}
	b.StopTimer()
	med, baseMed := percentile(lat, 0.5), percentile(base, 0.5)
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(baseMed), "version-median-ms")
	b.ReportMetric(float64(med)/float64(baseMed), "x-version")
}

func bigDocument(lines int) string {
	var sb strings.Builder
	for i := range lines {
		fmt.Fprintf(&sb, "func f%05d(x int) int { return x * %d } // héllo wörld\n", i, i)
	}
	return sb.String()
}

// BenchmarkCodeActionWhileJobWaits measures textDocument/codeAction on a
// 10,000-line document while a job holds an approval dialog open. The
// baseline is the same request with no job running.
func BenchmarkCodeActionWhileJobWaits(b *testing.B) {
	c := lsptest.Start(b, lsptest.Options{Bin: lsptest.TestBinary(b)})
	c.Initialize(nil)
	uri := c.Open("big.go", "go", bigDocument(10000))
	r := protocol.Range{Start: protocol.Position{Line: 5000, Character: 5}, End: protocol.Position{Line: 5001, Character: 10}}
	measure := func(n int) []time.Duration {
		lat := make([]time.Duration, 0, n)
		for range n {
			t0 := time.Now()
			if got := c.CodeActions(uri, r); len(got) == 0 {
				b.Fatal("no code actions")
			}
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	idle := measure(max(b.N, 200))

	release := make(chan struct{})
	defer close(release)
	c.OnRequest("window/showMessageRequest", lsptest.Hold(release, lsptest.Dismiss()))
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.test.ask", askArgs("Allow?", "Allow once", "Deny")); err != nil {
		b.Fatal(err)
	}
	c.WaitFrom(mark, "window/showMessageRequest", nil)

	b.ResetTimer()
	busy := measure(b.N)
	b.StopTimer()
	st := c.Status()
	if len(st.Jobs) != 1 {
		b.Fatalf("the job is not waiting any more: %+v", st.Jobs)
	}
	// The server's own handling time (read to reply written), without the
	// pipes and the scheduler: the part the machine's load does not add.
	b.ReportMetric(st.Latency["textDocument/codeAction"].P99Ms, "server-p99-ms")
	b.ReportMetric(ms(percentile(busy, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(busy, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(idle, 0.99)), "idle-p99-ms")
	b.ReportMetric(float64(percentile(busy, 0.99))/float64(percentile(idle, 0.99)), "x-idle-p99")
}

func vmRSS(b *testing.B, pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkMemory100Documents reads the server's VmRSS after initialize with
// 100 open documents of 500 lines (about 30 KB each). The baseline is the
// RSS right after initialize with none.
func BenchmarkMemory100Documents(b *testing.B) {
	bin := lsptest.Binary(b)
	doc := bigDocument(500)
	var rss, base []float64
	for range b.N {
		c := lsptest.Start(b, lsptest.Options{Bin: bin})
		c.Initialize(nil)
		c.Status()
		base = append(base, vmRSS(b, c.Pid()))
		for i := range 100 {
			c.Open(fmt.Sprintf("f%03d.go", i), "go", doc)
		}
		if st := c.Status(); st.OpenDocuments != 100 {
			b.Fatalf("open documents = %d", st.OpenDocuments)
		}
		rss = append(rss, vmRSS(b, c.Pid()))
		c.Shutdown()
	}
	slices.Sort(rss)
	slices.Sort(base)
	med, baseMed := rss[len(rss)/2], base[len(base)/2]
	b.ReportMetric(med, "rss-median-MB")
	b.ReportMetric(rss[len(rss)-1], "rss-max-MB")
	b.ReportMetric(baseMed, "rss-after-initialize-MB")
	b.ReportMetric(med/baseMed, "x-empty")
}
