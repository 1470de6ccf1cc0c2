package lsp

import (
	"sort"
	"time"

	"github.com/wardenhq/warden/agent/patch"
)

// StatusChange is one recorded change warden.undo can revert.
type StatusChange struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"` // patch | command
	Summary string    `json:"summary"`
	Root    string    `json:"root"`
	Undone  bool      `json:"undone,omitempty"`
	// Lost names the files whose content before was not kept.
	Lost []string `json:"lost,omitempty"`
}

// maxStatusChanges is how many recorded changes warden.status lists.
const maxStatusChanges = 20

// recordedChanges lists the workspace folders' recorded changes, newest
// first; never null.
func (s *Server) recordedChanges() []StatusChange {
	out := []StatusChange{}
	for _, root := range s.patchRoots("") {
		history, err := s.Checkpoints().History(root, maxStatusChanges)
		if err != nil {
			continue
		}
		for _, cp := range history {
			kind := "patch"
			if cp.Kind == patch.KindCommand {
				kind = "command"
			}
			out = append(out, StatusChange{Time: cp.Created, Kind: kind, Summary: cp.Summary, Root: cp.Root, Undone: cp.Undone != nil, Lost: cp.Lost})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > maxStatusChanges {
		out = out[:maxStatusChanges]
	}
	return out
}
