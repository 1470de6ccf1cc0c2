package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/sandbox/linux"
)

// BenchmarkFallbackReads: a run in the namespace-less fallback whose read
// policy hides the built-in credential stores of a home with 200 other
// entries (Landlock rules around them), against the same run with nothing
// to hide (read_access = full).
func BenchmarkFallbackReads(b *testing.B) {
	if linux.Probe().LandlockABI < 1 {
		b.Skip("no Landlock")
	}
	noNamespacesForTest = true
	defer func() { noNamespacesForTest = false }()
	h := newReadHome(b)
	for i := range 200 {
		os.WriteFile(filepath.Join(h.home, fmt.Sprintf("file%03d", i)), nil, 0o644)
	}
	for _, access := range []ReadAccess{ReadFull, ReadDenySecrets} {
		b.Run(string(access), func(b *testing.B) {
			p := h.policy()
			p.Reads.Access = access
			for b.Loop() {
				res, err := Run(context.Background(), Command{Argv: []string{"/bin/true"}, Cwd: h.ws, Policy: p, Helper: testHelper,
					Env: EnvPolicy{Set: map[string]string{"HOME": h.home}}})
				if err != nil || res.ExitCode != 0 || res.Sandbox != "linux-landlock" {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}
