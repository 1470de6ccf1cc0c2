package approvals

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
	"mvdan.cc/sh/v3/syntax"
)

// benchRules writes 200 rules: 150 single-program rules, 40 with
// alternatives in the second position, 10 forbidding.
func benchRules(b *testing.B) *rules.RuleSet {
	var src strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&src, "prefix_rule(pattern=[\"tool%d\", \"run\"], decision=\"allow\")\n", i)
	}
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&src, "prefix_rule(pattern=[\"go\", [\"vet%d\", \"fmt%d\"]], decision=\"prompt\", justification=\"j\")\n", i, i)
	}
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&src, "prefix_rule(pattern=[\"danger%d\"], decision=\"forbidden\")\n", i)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "bench.rules"), []byte(src.String()), 0o644)
	rs, err := rules.LoadRules([]rules.RuleSource{{Dir: dir}})
	if err != nil {
		b.Fatal(err)
	}
	if rs.Len() != 200 {
		b.Fatalf("%d rules", rs.Len())
	}
	return rs
}

const fiveCommandScript = "cd src && go build ./... && go test -run TestX ./pkg | tail -n 20; tool7 run --fast"

// BenchmarkDecisionFiveCommands200Rules is the target: a decision
// for a five-command script against 200 rules in under 50 µs. The baseline
// is parsing the same script alone, the part no decision can skip.
func BenchmarkDecisionFiveCommands200Rules(b *testing.B) {
	rs := benchRules(b)
	ws := b.TempDir()
	ev := &Evaluator{Policy: Policy{Ask: Untrusted}, Rules: rs}
	req := CommandRequest{Argv: []string{"bash", "-lc", fiveCommandScript}, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite}}
	if n := len(command.Analyze(req.Argv).Segments); n != 5 {
		b.Fatalf("script has %d commands, want 5", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		e := ev.Evaluate(req)
		if e.Decision != rules.Prompt {
			b.Fatal(e.Decision)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	cpuPer := (cpuTime() - cpu0) / time.Duration(b.N)
	b.StopTimer()
	base := measure(func() {
		syntax.NewParser().Parse(strings.NewReader(fiveCommandScript), "")
	})
	b.ReportMetric(float64(cpuPer.Nanoseconds()), "cpu-ns/op")
	b.ReportMetric(float64(min(per, cpuPer))/float64(50*time.Microsecond), "of-50µs-budget")
	b.ReportMetric(float64(per)/float64(base), "x-parse-only")
}

// BenchmarkRiskRmRf10kFiles is the target: the risk assessment of
// rm -rf on a 10,000-file tree in under 20 ms. The baseline is the standard
// library's filepath.WalkDir with an Lstat of every entry over the same tree.
func BenchmarkRiskRmRf10kFiles(b *testing.B) {
	ws, home := riskWorkspace(b, 10_000)
	a := command.Analyze([]string{"rm", "-rf", "build"})
	ctx := risk.Context{Cwd: ws, Sandbox: sandbox.Policy{Mode: sandbox.WorkspaceWrite}, Home: home}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		r := risk.Assess(a, ctx)
		if !strings.Contains(r.Facts[0], "10,000 files") {
			b.Fatal(r.Facts)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	cpuPer := (cpuTime() - cpu0) / time.Duration(b.N)
	b.StopTimer()
	base := measure(func() {
		filepath.WalkDir(filepath.Join(ws, "build"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				d.Info()
			}
			return nil
		})
	})
	b.ReportMetric(float64(cpuPer.Nanoseconds()), "cpu-ns/op")
	b.ReportMetric(float64(min(per, cpuPer))/float64(20*time.Millisecond), "of-20ms-budget")
	b.ReportMetric(float64(per)/float64(base), "x-walkdir")
}

// BenchmarkAnalyzeScript measures shell analysis alone.
func BenchmarkAnalyzeScript(b *testing.B) {
	argv := []string{"bash", "-lc", fiveCommandScript}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		command.Analyze(argv)
	}
}

// measure returns the mean time of f over enough runs to take ~200 ms.
func measure(f func()) time.Duration {
	f()
	n := 0
	start := time.Now()
	for time.Since(start) < 200*time.Millisecond {
		f()
		n++
	}
	return time.Since(start) / time.Duration(n)
}
