package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
)

// timingPrompter is the user: it notes when the dialog would appear and
// denies.
type timingPrompter struct {
	shown chan time.Time
	risk  chan risk.Level
}

func (p *timingPrompter) Prompt(_ context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	p.shown <- time.Now()
	p.risk <- req.Risk.Level
	return approvals.Denied, nil
}

// mustNotRun fails the benchmark if a command it denied is run anyway (and
// keeps the test binary from being re-executed as a sandbox helper).
type mustNotRun struct{ b *testing.B }

func (r mustNotRun) Run(context.Context, approvals.RunSpec) (approvals.RunResult, error) {
	r.b.Error("a denied command was run")
	return approvals.RunResult{}, errors.New("denied commands must not run")
}

// BenchmarkToolCallToDialog measures, per iteration, the time from the
// moment the fake model flushed the last byte of a streamed shell tool call
// to the moment the approval dialog is asked for, through the real client,
// session loop, tool registry, orchestrator and static risk assessment.
// Target: under 5 ms. The baseline is the static evaluation alone.
func BenchmarkToolCallToDialog(b *testing.B) {
	dir := b.TempDir()
	build := filepath.Join(dir, "build")
	os.MkdirAll(build, 0o755)
	for i := 0; i < 50; i++ {
		os.WriteFile(filepath.Join(build, "f"+string(rune('a'+i%26))+string(rune('a'+i/26))), []byte("x"), 0o644)
	}
	args := `{"command":["rm","-rf","build"],"justification":"clean the build output"}`
	sandbox := approvals.Sandbox{Mode: approvals.WorkspaceWrite}
	policy, err := approvals.ParsePolicy("on-request", nil)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("baseline-static-evaluation", func(b *testing.B) {
		ev := &approvals.Evaluator{Policy: policy}
		for b.Loop() {
			ev.Evaluate(approvals.CommandRequest{Argv: []string{"rm", "-rf", "build"}, Cwd: dir, Sandbox: sandbox})
		}
	})

	b.Run("streamed-call-to-dialog", func(b *testing.B) {
		srv := modeltest.New(b)
		prompter := &timingPrompter{shown: make(chan time.Time, 1), risk: make(chan risk.Level, 1)}
		orch := &approvals.Orchestrator{Policy: policy, Prompter: prompter, Runner: mustNotRun{b}}
		client := testClient(b, srv.URL)
		var lat []time.Duration
		for b.Loop() {
			flushed := make(chan time.Time, 1)
			srv.Push(modeltest.Turn{Calls: []modeltest.Call{{Name: "shell", Args: args}}, Done: flushed},
				modeltest.Turn{Text: "ok"})
			s, err := NewSession(SessionConfig{Model: client, Env: ToolEnv{Dir: dir, Runner: &Orchestrated{Orchestrator: orch, Sandbox: sandbox}}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Run(context.Background(), "clean"); err != nil {
				b.Fatal(err)
			}
			t1, t0 := <-prompter.shown, <-flushed
			if level := <-prompter.risk; level != risk.High {
				b.Fatalf("risk %s, want high for rm -rf", level)
			}
			lat = append(lat, t1.Sub(t0))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		median, p90 := lat[len(lat)/2], lat[len(lat)*9/10]
		b.ReportMetric(float64(median.Microseconds())/1000, "ms-median")
		b.ReportMetric(float64(p90.Microseconds())/1000, "ms-p90")
		if median > 5*time.Millisecond {
			b.Errorf("tool call to dialog: median %v, want under 5 ms", median)
		}
	})
}
