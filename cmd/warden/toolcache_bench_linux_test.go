package main

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// webModule is a fresh module whose test imports net/http and
// encoding/json: cold, it rebuilds a good part of the standard library.
func webModule(b *testing.B) string {
	ws, err := os.MkdirTemp("/var/tmp", "warden-web-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(ws) })
	writeFiles(b, ws, map[string]string{
		"go.mod": "module example.com/web\n\ngo 1.21\n",
		"web.go": "package web\n\nimport (\n\t\"encoding/json\"\n\t\"net/http\"\n\t\"strings\"\n)\n\n" +
			"// Decode reads a JSON object from a request's body.\nfunc Decode(r *http.Request) (m map[string]int, err error) {\n\treturn m, json.NewDecoder(r.Body).Decode(&m)\n}\n\n" +
			"// New is a request carrying {\"a\":1}.\nfunc New() *http.Request {\n\tr, _ := http.NewRequest(\"POST\", \"http://x/\", strings.NewReader(`{\"a\":1}`))\n\treturn r\n}\n",
		"web_test.go": "package web\n\nimport \"testing\"\n\nfunc TestDecode(t *testing.T) {\n\tif m, err := Decode(New()); err != nil || m[\"a\"] != 1 {\n\t\tt.Fatal(m, err)\n\t}\n}\n",
	})
	return ws
}

// BenchmarkToolchainGoTestFirstRun is the first sandboxed `go test ./...`
// in a fresh workspace (its private caches empty, layered on the user's
// warm ones) against the same first run unsandboxed in another fresh copy,
// with the user's warm cache, in the same run. Target: within 1.5×.
func BenchmarkToolchainGoTestFirstRun(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go")
	}
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		b.Skip("set WARDEN_BIN (make bench does)")
	}
	home := toolHome(b)
	env := append([]string{"PATH=" + os.Getenv("PATH")}, toolEnv(home)...)
	plain := func(ws string) {
		cmd := exec.Command("go", "test", "./...")
		cmd.Dir, cmd.Env = ws, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go test: %v\n%s", err, out)
		}
	}
	sandboxed := func(ws string) {
		cmd := exec.Command(bin, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "go", "test", "./...")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sandboxed go test: %v\n%s", err, out)
		}
	}
	plain(webModule(b)) // the user's cache, warm
	var sb, pl time.Duration
	var ratios []float64
	b.ResetTimer()
	for range b.N {
		a, c := webModule(b), webModule(b)
		start := time.Now()
		sandboxed(a)
		s := time.Since(start)
		start = time.Now()
		plain(c)
		p := time.Since(start)
		sb, pl = sb+s, pl+p
		ratios = append(ratios, float64(s)/float64(p))
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(sb.Milliseconds())/float64(b.N), "sandboxed-ms/op")
	b.ReportMetric(float64(pl.Milliseconds())/float64(b.N), "plain-ms/op")
	b.ReportMetric(float64(sb)/float64(pl), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-pair-ratio")
}
