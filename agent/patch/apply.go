package patch

import (
	"context"
	"fmt"
)

// Apply lands an approved plan through ws. With checkpoints (cps may be nil)
// it first records every touched file's state, then fingerprints what landed
// so Checkpoints.Undo can put it back, and refuses to, if it was edited since.
func Apply(ctx context.Context, ws Workspace, plan *Plan, cps *Checkpoints) (*Result, error) {
	var cp *Checkpoint
	if cps != nil {
		var err error
		if cp, err = cps.record(plan); err != nil {
			return nil, fmt.Errorf("record a checkpoint before patching: %w; nothing was changed", err)
		}
	}
	if cp != nil {
		// Disk settles it with the files, before it forgets its journal.
		plan.checkpoint = &checkpointLink{cps: cps, cp: cp}
		defer func() { plan.checkpoint = nil }()
	}
	res, err := ws.Apply(ctx, plan)
	if cp != nil && !plan.checkpoint.settled {
		// Settle even after an error: an editor may have applied part of it.
		if serr := cps.settle(cp, ws, plan, res); serr != nil && err == nil {
			err = serr
		}
	}
	return res, err
}
