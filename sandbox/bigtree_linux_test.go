package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// makeBigTree builds a mid-size monorepo under dir: 10,420 directories
// (20 × 20 × 25) holding 100,000 files (none unless files), with a nested
// repository's .git three levels down and protected names six levels down
// (a chain below the last leaf). It returns the deep protected paths.
func makeBigTree(tb testing.TB, dir string, files bool) (deep []string) {
	tb.Helper()
	for a := range 20 {
		for b := range 20 {
			for c := range 25 {
				leaf := filepath.Join(dir, fmt.Sprintf("pkg%02d", a), fmt.Sprintf("mod%02d", b), fmt.Sprintf("src%02d", c))
				if err := os.MkdirAll(leaf, 0o755); err != nil {
					tb.Fatal(err)
				}
				n := 10
				if !files || a == 0 && b == 0 && c < 20 {
					n = 0 // keeps the total at 100,000 with the chain's files
				}
				for f := range n {
					if err := os.WriteFile(filepath.Join(leaf, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
						tb.Fatal(err)
					}
				}
			}
		}
	}
	chain := filepath.Join(dir, "pkg19", "mod19", "src24", "a", "b", "c")
	if err := os.MkdirAll(filepath.Join(dir, "pkg07", "mod03", "src11", ".git", "hooks"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(chain, 0o755); err != nil {
		tb.Fatal(err)
	}
	deep = []string{filepath.Join(dir, "pkg07", "mod03", "src11", ".git")}
	for _, p := range []string{filepath.Join(dir, "pkg07", "mod03", "src11", ".git", "config"), filepath.Join(chain, "mise.toml"), filepath.Join(chain, ".envrc")} {
		if err := os.WriteFile(p, []byte("# deep\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	deep = append(deep, filepath.Join(chain, "mise.toml"), filepath.Join(chain, ".envrc"))
	return deep
}
