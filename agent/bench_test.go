package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// scriptedModel answers from memory: benchmarks of the loop measure Warden,
// not a model or the network.
type scriptedModel struct {
	turns []Reply
	next  int
}

func (m *scriptedModel) Stream(_ context.Context, _ Request, _ func(string)) (Reply, error) {
	r := m.turns[m.next%len(m.turns)]
	m.next++
	return r, nil
}

func toolTurn(i int) Reply {
	return Reply{FinishReason: openai.FinishReasonToolCalls, ToolCalls: []openai.ToolCall{{
		ID: fmt.Sprintf("c%d", i), Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"main.go","limit":50}`},
	}}}
}

// BenchmarkLoopOverheadPerTurn runs tasks of ten tool turns and an answer,
// with transcripts on. The baseline runs the same ten tool calls directly;
// turn-overhead-ns is what the loop adds per turn (target: under 1 ms).
// Opening a session (creating its transcript files) happens once per task,
// not per turn, and is left out of the timing.
func BenchmarkLoopOverheadPerTurn(b *testing.B) {
	dir := b.TempDir()
	src := ""
	for i := 0; i < 200; i++ {
		src += fmt.Sprintf("func f%d() int { return %d }\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	const toolTurns = 10
	var turns []Reply
	for i := 0; i < toolTurns; i++ {
		turns = append(turns, toolTurn(i))
	}
	turns = append(turns, Reply{Content: "done", FinishReason: openai.FinishReasonStop})
	state := b.TempDir()
	ctx := context.Background()

	var baseline float64
	b.Run("baseline-tools-only", func(b *testing.B) {
		reg := NewRegistry(&ToolEnv{Dir: dir})
		for b.Loop() {
			for i := 0; i < toolTurns; i++ {
				reg.Call(ctx, "read_file", turns[i].ToolCalls[0].Function.Arguments)
			}
		}
		baseline = float64(b.Elapsed().Nanoseconds()) / float64(b.N) / (toolTurns + 1)
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s, err := NewSession(SessionConfig{Model: &scriptedModel{turns: turns}, Env: ToolEnv{Dir: dir}, TranscriptDir: state})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if res, err := s.Run(ctx, "read it"); err != nil || res.Answer != "done" {
				b.Fatal(res, err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
		perTurn := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / (toolTurns + 1)
		b.ReportMetric(perTurn, "ns/turn")
		b.ReportMetric(perTurn-baseline, "turn-overhead-ns")
		if perTurn-baseline > 1e6 {
			b.Errorf("loop overhead %.0f ns per turn, want under 1 ms", perTurn-baseline)
		}
	})
}
