package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/lsp/wire"
)

// BenchmarkAgentToolCallToDialog is issue 6's target, end to end through the
// real binary: from the moment the fake model flushed the last byte of a
// streamed shell tool call to the moment the editor receives the approval
// dialog, with static risk only. Target: median under 5 ms. The baseline is
// a warden.status round trip on the same connection.
func BenchmarkAgentToolCallToDialog(b *testing.B) {
	srv := modeltest.New(b)
	c := lsptest.Start(b, lsptest.Options{Env: []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model"}})
	// rm -rf inside the workspace runs sandboxed unasked under on-request
	// (issue 15): untrusted asks for it every time.
	c.Initialize(map[string]any{"approvalPolicy": "untrusted"})
	os.MkdirAll(filepath.Join(c.Dir, "build"), 0o755)
	os.WriteFile(filepath.Join(c.Dir, "build", "a.o"), []byte("x"), 0o644)
	shown := make(chan time.Time, 1)
	c.OnRequest("window/showMessageRequest", func(params json.RawMessage) (any, *lsptest.RPCError) {
		shown <- time.Now()
		return lsptest.Choose("Deny")(params)
	})
	c.OnRequest("window/showDocument", func(json.RawMessage) (any, *lsptest.RPCError) {
		return wire.ShowDocumentResult{Success: true}, nil
	})

	// One dialog, end to end; returns the latency from the model's last
	// byte to the dialog.
	dialog := func() time.Duration {
		flushed := make(chan time.Time, 1)
		srv.Push(modeltest.Turn{Calls: []modeltest.Call{{Name: "shell", Args: `{"command":["rm","-rf","build"]}`}}, Done: flushed},
			modeltest.Turn{Text: "ok"})
		mark := c.Mark()
		if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "clean"}); err != nil {
			b.Fatal(err)
		}
		var t1 time.Time
		select {
		case t1 = <-shown:
		case <-time.After(30 * time.Second):
			b.Fatal("no approval dialog for rm -rf build within 30 s")
		}
		d := t1.Sub(<-flushed)
		c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
		return d
	}
	// The first runs pay for cold caches and first-use setup: not the
	// latency the target is about.
	for range 3 {
		dialog()
	}

	// The baseline is measured next to each sample, so both see the same
	// load on the machine.
	var lat, base []time.Duration
	b.ResetTimer()
	for range b.N {
		lat = append(lat, dialog())
		b.StopTimer()
		t0 := time.Now()
		c.Status()
		base = append(base, time.Since(t0))
		b.StartTimer()
	}
	b.StopTimer()
	med, baseMed := percentile(lat, 0.5), percentile(base, 0.5)
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(percentile(lat, 0.9)), "p90-ms")
	b.ReportMetric(ms(baseMed), "status-roundtrip-median-ms")
	b.ReportMetric(float64(med)/float64(baseMed), "x-status-roundtrip")
	// The target is judged on a real sample (not the 1-iteration probe
	// run), and on a machine slowed by other work it scales with the
	// baseline: a dialog costs at most dialogRoundTrips status round trips.
	if len(lat) >= 10 && med > 5*time.Millisecond && med > dialogRoundTrips*baseMed {
		b.Errorf("streamed tool call to dialog: median %v, want under 5 ms (or, on a loaded machine, %d status round trips: %v)", med, dialogRoundTrips, dialogRoundTrips*baseMed)
	}
}

// dialogRoundTrips bounds the dialog latency in status round trips; 8 to 17
// were measured on 2 cores under a load average of 11.
const dialogRoundTrips = 40
