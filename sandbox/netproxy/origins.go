package netproxy

import (
	"sync"
	"sync/atomic"
	"time"
)

// Refusal is a destination the proxy refused for a run, with the reason the
// client was given, so the command's result can tell the model.
type Refusal struct {
	Dest   Destination
	Reason string
	// Count is how many connections to Dest were refused for this reason.
	Count int
	// Last is when the latest of them was refused.
	Last time.Time
}

// maxRefusals bounds what one run can make the proxy remember; a command
// that tries thousands of hosts is reported by its first ones.
const maxRefusals = 64

// originState is what the proxy keeps per run.
type originState struct {
	bytesUp atomic.Int64

	mu       sync.Mutex
	refusals []Refusal
}

func (st *originState) refuse(d Destination, reason string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.refusals {
		r := &st.refusals[i]
		if r.Dest == d && r.Reason == reason {
			r.Count++
			r.Last = at
			return
		}
	}
	if len(st.refusals) < maxRefusals {
		st.refusals = append(st.refusals, Refusal{Dest: d, Reason: reason, Count: 1, Last: at})
	}
}

// origin returns the state of a run, creating it on first use.
func (s *Server) origin(runID string) *originState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.origins[runID]
	if st == nil {
		st = &originState{}
		s.origins[runID] = st
	}
	return st
}

// Refusals lists the destinations refused for a run so far, in the order
// they were first refused.
func (s *Server) Refusals(runID string) []Refusal {
	s.mu.Lock()
	st := s.origins[runID]
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]Refusal(nil), st.refusals...)
}

// BytesUp reports how many bytes a run has sent through the proxy.
func (s *Server) BytesUp(runID string) int64 {
	s.mu.Lock()
	st := s.origins[runID]
	s.mu.Unlock()
	if st == nil {
		return 0
	}
	return st.bytesUp.Load()
}

// Forget drops what the proxy keeps about a run; call it when the run ends.
// Connections still open keep counting into the forgotten state.
func (s *Server) Forget(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.origins, runID)
}
