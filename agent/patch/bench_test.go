package patch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchTree is a workspace of files and a unified diff changing all of them,
// the same patch for Warden and for `git apply`.
type benchTree struct {
	files map[string]string // relative path → original content
	patch string
}

// makeBenchTree builds nFiles files of linesPerFile lines and a git-style
// diff with a hunk every `every` lines of each file.
func makeBenchTree(nFiles, linesPerFile, every int) benchTree {
	bt := benchTree{files: make(map[string]string, nFiles)}
	var p strings.Builder
	for f := 0; f < nFiles; f++ {
		name := fmt.Sprintf("pkg%02d/file%04d.go", f%50, f)
		lines := make([]string, linesPerFile)
		for i := range lines {
			lines[i] = fmt.Sprintf("\tvalue%d := compute(%d, %q) // file %d", i, i*f, name, f)
		}
		bt.files[name] = strings.Join(lines, "\n") + "\n"
		fmt.Fprintf(&p, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", name, name, name, name)
		delta := 0
		for at := 5; at+6 < linesPerFile; at += every {
			// 3 context, 2 removed, 3 added, 3 context.
			fmt.Fprintf(&p, "@@ -%d,8 +%d,9 @@\n", at+1, at+1+delta)
			for _, l := range lines[at : at+3] {
				p.WriteString(" " + l + "\n")
			}
			for _, l := range lines[at+3 : at+5] {
				p.WriteString("-" + l + "\n")
			}
			for k := 0; k < 3; k++ {
				fmt.Fprintf(&p, "+\tchanged%d := recompute(%d) // new\n", at+k, k)
			}
			for _, l := range lines[at+5 : at+8] {
				p.WriteString(" " + l + "\n")
			}
			delta++
		}
	}
	bt.patch = p.String()
	return bt
}

func (bt benchTree) write(b *testing.B, root string) {
	for name, content := range bt.files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatchVsGitApply parses and applies a 1,000-file, ~100,000-line
// unified diff with Warden (in process, and as `warden apply-patch` when
// WARDEN_BIN is set) and with `git apply`, on the same patch and the same
// files in the same run, and reports the ratio (target: ≤ 1.0). Each op runs
// every tool several times, interleaved, and compares medians, because the
// disk is shared and noisy.
func BenchmarkPatchVsGitApply(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git not installed")
	}
	bt := makeBenchTree(1000, 160, 20)
	patchLines := strings.Count(bt.patch, "\n")
	root := b.TempDir()
	patchFile := filepath.Join(b.TempDir(), "big.patch")
	os.WriteFile(patchFile, []byte(bt.patch), 0o644)
	bin := os.Getenv("WARDEN_BIN")
	state := b.TempDir()

	inProcess := func() {
		text, err := os.ReadFile(patchFile)
		if err != nil {
			b.Fatal(err)
		}
		changes, err := Parse(string(text))
		if err != nil {
			b.Fatal(err)
		}
		plan, err := Prepare(changes, Disk{}, Options{Root: root})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (Disk{}).Apply(context.Background(), plan); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (user+system) of the child processes, per tool.
	cpu := map[string]time.Duration{}
	command := func(tool, name string, args ...string) func() {
		return func() {
			cmd := exec.Command(name, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, out)
			}
			cpu[tool] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	tools := []struct {
		name string
		run  func()
	}{
		{"warden", inProcess},
		{"git-apply", command("git-apply", git, "apply", patchFile)},
	}
	if bin != "" {
		tools = append(tools, struct {
			name string
			run  func()
		}{"warden-cli", command("warden-cli", bin, "apply-patch", "--cwd", root, patchFile)})
	}
	const rounds = 9
	times := make([][]time.Duration, len(tools))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for t, tool := range tools {
				b.StopTimer()
				bt.write(b, root)
				b.StartTimer()
				start := time.Now()
				tool.run()
				times[t] = append(times[t], time.Since(start))
			}
		}
	}
	b.StopTimer()
	med := make([]time.Duration, len(tools))
	for t := range tools {
		slices.Sort(times[t])
		med[t] = times[t][len(times[t])/2]
		b.ReportMetric(float64(med[t].Microseconds())/1000, tools[t].name+"-ms")
	}
	b.ReportMetric(float64(patchLines), "patch-lines")
	b.ReportMetric(float64(med[0])/float64(med[1]), "ratio")
	if bin != "" {
		b.ReportMetric(float64(med[2])/float64(med[1]), "cli-ratio")
		// Wall time is what the user waits; CPU time shows the cost on a
		// busy machine, where Warden's parallel I/O helps less.
		b.ReportMetric(float64(cpu["warden-cli"])/float64(cpu["git-apply"]), "cli-cpu-ratio")
	}
}
