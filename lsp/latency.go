package lsp

import (
	"slices"
	"sync"
	"time"
)

// latencyWindow is how many recent requests per method warden.status
// summarises.
const latencyWindow = 1024

// latencies keeps recent handling times per request method: from the
// message being read to its reply being written, the server's own share of
// what the editor waits.
type latencies struct {
	mu      sync.Mutex
	methods map[string]*ring
}

type ring struct {
	d [latencyWindow]time.Duration
	n int // total recorded
}

func (l *latencies) record(method string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.methods == nil {
		l.methods = make(map[string]*ring)
	}
	r := l.methods[method]
	if r == nil {
		r = &ring{}
		l.methods[method] = r
	}
	r.d[r.n%latencyWindow] = d
	r.n++
}

// LatencyStats summarises one method's recent requests.
type LatencyStats struct {
	Count int     `json:"count"` // requests since start
	P50Ms float64 `json:"p50Ms"` // over the last 1024
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

func (l *latencies) stats() map[string]LatencyStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]LatencyStats, len(l.methods))
	for m, r := range l.methods {
		window := slices.Clone(r.d[:min(r.n, latencyWindow)])
		slices.Sort(window)
		at := func(p float64) float64 {
			return float64(window[int(float64(len(window)-1)*p)]) / float64(time.Millisecond)
		}
		out[m] = LatencyStats{Count: r.n, P50Ms: at(0.5), P99Ms: at(0.99), MaxMs: at(1)}
	}
	return out
}
