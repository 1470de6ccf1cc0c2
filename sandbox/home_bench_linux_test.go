package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkHomeRoot times what holding a home directory's dot-entries
// costs: /bin/true in a workspace that is a home with 120 dot-entries
// (home-ms) against one in a plain directory (plain-ms), interleaved, with
// spare helpers as a long-lived process keeps them; and Policy.Roots alone
// for each (roots-home-us, roots-plain-us).
//
//	go test -run '^$' -bench HomeRoot ./sandbox
func BenchmarkHomeRoot(b *testing.B) {
	home, plain := b.TempDir(), b.TempDir()
	for i := range 120 {
		p := filepath.Join(home, fmt.Sprintf(".tool%03d", i))
		if i%2 == 0 {
			os.MkdirAll(filepath.Join(p, "conf"), 0o755)
		} else {
			os.WriteFile(p, []byte("x\n"), 0o644)
		}
	}
	policy := func(ws string) Policy {
		return Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, Reads: ReadPolicy{Home: home}, Quarantine: b.TempDir()}
	}
	cmd := func(ws string) Command {
		return Command{Argv: []string{"/bin/true"}, Cwd: ws, Policy: policy(ws), Helper: testHelper}
	}
	run := func(c Command) time.Duration {
		start := time.Now()
		res, err := Run(context.Background(), c)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("sandboxed /bin/true: %v %+v", err, res)
		}
		return time.Since(start)
	}
	roots := func(p Policy) time.Duration {
		start := time.Now()
		if r, err := p.Roots(); err != nil || len(r) == 0 {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	inHome, inPlain := cmd(home), cmd(plain)
	if r, _ := inHome.Policy.Roots(); len(r) == 0 || len(r[0].Protected) < 120 && len(r[len(r)-1].Protected) < 120 {
		b.Fatalf("the home's dot-entries are not held: %+v", r)
	}
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	run(inHome)
	run(inPlain)
	var h, p, rh, rp []time.Duration
	b.ResetTimer()
	for range b.N {
		spares.settle()
		p = append(p, run(inPlain))
		spares.settle()
		h = append(h, run(inHome))
		rp = append(rp, roots(inPlain.Policy))
		rh = append(rh, roots(inHome.Policy))
	}
	b.StopTimer()
	b.ReportMetric(ms(median(p)), "plain-ms")
	b.ReportMetric(ms(median(h)), "home-ms")
	b.ReportMetric(float64(median(rp).Microseconds()), "roots-plain-us")
	b.ReportMetric(float64(median(rh).Microseconds()), "roots-home-us")
}
