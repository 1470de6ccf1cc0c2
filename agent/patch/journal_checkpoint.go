package patch

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// checkpointLink ties a plan to the undo record it goes with: the checkpoint
// recorded before a patch (settled once the patch landed), or the one an
// undo reverts (marked undone once it is reverted). Disk.Apply settles it
// before it forgets its journal, so a kill cannot separate the files from
// their record.
type checkpointLink struct {
	cps     *Checkpoints
	cp      *Checkpoint
	undo    bool
	settled bool
}

// checkpointRef is the link as the journal keeps it, for recovery.
type checkpointRef struct {
	Dir  string `json:"dir"`
	Root string `json:"root"`
	ID   string `json:"id"`
	Undo bool   `json:"undo,omitempty"`
}

func (l *checkpointLink) ref() *checkpointRef {
	if l == nil {
		return nil
	}
	return &checkpointRef{Dir: l.cps.dir, Root: l.cp.Root, ID: l.cp.ID, Undo: l.undo}
}

// landed settles the record of a plan that landed whole.
func (l *checkpointLink) landed(plan *Plan) error {
	if l == nil {
		return nil
	}
	var err error
	if l.undo {
		err = l.cps.markUndone(l.cp)
	} else {
		err = l.cps.settle(l.cp, Disk{}, plan, allLanded(plan))
	}
	l.settled = err == nil
	return err
}

// settle brings a recovered change's record in line with its files:
// finished, a patch's record is fingerprinted and an undo's marked undone;
// rolled back, a patch's record goes (nothing changed) and an undo's stays.
func (r *checkpointRef) settle(finished bool) error {
	if r == nil || (r.Undo && !finished) {
		return nil
	}
	cps := NewCheckpoints(r.Dir)
	cp, err := cps.load(filepath.Join(cps.rootDir(r.Root), r.ID+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // settled and then dropped, as unchanged, before the kill
	}
	if err != nil {
		return err
	}
	switch {
	case !finished:
		return cps.remove(cp)
	case r.Undo:
		return cps.markUndone(cp)
	}
	plan, res := &Plan{Root: cp.Root}, &Result{}
	for _, s := range cp.Files {
		plan.Files = append(plan.Files, FileEdit{Path: s.Path})
		res.Files = append(res.Files, FileResult{Status: Landed})
	}
	return cps.settle(cp, Disk{}, plan, res)
}
