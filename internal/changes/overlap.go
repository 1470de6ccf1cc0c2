package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A root's record is the difference between two looks at it, so what
// another run wrote in between is in it too: undoing the one would revert
// the other. Runs cannot be told apart in the tree, so each recorded run
// registers, per root, when it began and ended, in the store's runs
// directory (shared by every Warden process, hidden from sandboxed
// commands), and a run whose time overlapped another's says so.

// runEntry is one recorded run of one root, as the registry keeps it.
type runEntry struct {
	ID    string     `json:"id"`
	PID   int        `json:"pid"`
	Label string     `json:"label,omitempty"`
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end,omitempty"`
}

// runGrace is how long an ended run stays registered past the start of
// every run still going: a run registering meanwhile sees it.
const runGrace = time.Minute

func (s *Store) runsDir(root string) string {
	h := sha256.Sum256([]byte(root))
	return filepath.Join(s.dir, "runs", hex.EncodeToString(h[:8]))
}

// register records that a run labelled label begins in root now.
func (s *Store) register(root, label string) *runEntry {
	e := &runEntry{ID: strconv.FormatUint(rand.Uint64(), 36), PID: os.Getpid(), Label: label, Start: time.Now()}
	s.writeRun(root, e) // best effort: unregistered, others cannot see this run
	return e
}

// unregister forgets a run that never started: it wrote nothing.
func (s *Store) unregister(root string, e *runEntry) {
	os.Remove(filepath.Join(s.runsDir(root), e.ID+".json"))
}

func (s *Store) writeRun(root string, e *runEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.runsDir(root), e.ID+".json"), data)
}

// overlapping ends the run e in root and lists the other runs whose time
// overlapped its own, described for people; it forgets the runs no run
// still going can overlap.
func (s *Store) overlapping(root string, e *runEntry) []string {
	end := time.Now()
	e.End = &end
	if err := s.writeRun(root, e); err != nil {
		return []string{"unknown: the record of this run's time could not be kept (" + err.Error() + ")"}
	}
	var out []string
	others, _ := os.ReadDir(s.runsDir(root))
	live := end
	var ended []*runEntry
	for _, f := range others {
		o := s.readRun(root, f.Name())
		if o == nil || o.ID == e.ID {
			continue
		}
		if o.End == nil && !processAlive(o.PID) {
			os.Remove(filepath.Join(s.runsDir(root), f.Name())) // its Warden died: nothing more of it is recorded
			continue
		}
		if o.Start.Before(end) && (o.End == nil || o.End.After(e.Start)) {
			out = append(out, o.describe())
		}
		switch {
		case o.End == nil && o.Start.Before(live):
			live = o.Start
		case o.End != nil:
			ended = append(ended, o)
		}
	}
	ended = append(ended, e)
	for _, o := range ended {
		if o.End.Before(live.Add(-runGrace)) {
			os.Remove(filepath.Join(s.runsDir(root), o.ID+".json"))
		}
	}
	return out
}

func (s *Store) readRun(root, name string) *runEntry {
	if !strings.HasSuffix(name, ".json") {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.runsDir(root), name))
	if err != nil {
		return nil
	}
	var e runEntry
	if json.Unmarshal(data, &e) != nil || e.ID == "" {
		return nil
	}
	return &e
}

// describe names the run for people: its command, and when it ran.
func (e *runEntry) describe() string {
	label := e.Label
	if label == "" {
		label = "another Warden run"
	}
	when := "from " + e.Start.Local().Format("15:04:05")
	if e.End != nil {
		when += " to " + e.End.Local().Format("15:04:05")
	} else {
		when += ", still running"
	}
	return fmt.Sprintf("%s (%s)", label, when)
}
