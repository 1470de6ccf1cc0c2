package protect

import (
	"os"
	"testing"
	"time"
)

// BenchmarkWalkRepos measures one uncached scan of WARDEN_SCAN_TREE (default:
// the Go module cache's parent, a large tree).
func BenchmarkWalkRepos(b *testing.B) {
	tree := os.Getenv("WARDEN_SCAN_TREE")
	if tree == "" {
		b.Skip("set WARDEN_SCAN_TREE to a large directory")
	}
	for i := 0; i < b.N; i++ {
		start := time.Now()
		found := WalkRepos(tree, nil, -1)
		b.ReportMetric(float64(len(found)), "repos")
		b.ReportMetric(float64(time.Since(start).Microseconds()), "µs/scan")
	}
}
