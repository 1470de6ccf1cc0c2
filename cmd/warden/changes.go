package main

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/changes"
	"github.com/wardenhq/warden/sandbox"
)

// undoHistory is where the CLI records patches and what commands changed.
func undoHistory() *patch.Checkpoints { return patch.NewCheckpoints(config.UndoDir()) }

// commandChanges is the change log of the commands this process runs, nil
// when record_changes is off. A one-shot process (keep false) starts
// listing the workspace now, while it loads the rules and starts the
// sandbox, unless the sandbox reports each change as it happens; one that
// runs more commands (warden run) keeps the listing.
func commandChanges(cfg config.Config, policy sandbox.Policy, keep bool) *approvals.ChangeLog {
	if !cfg.RecordsChanges() {
		return nil
	}
	log := changeLog(keep)
	if !keep {
		log.Prime(policy.Mode, policy.Workspace)
	}
	return log
}

// changeLog records what each run that can write changes in the
// workspace, in the undo history. keep: the process runs more than one
// command (warden run), and keeps each root's listing, watched.
func changeLog(keep bool) *approvals.ChangeLog {
	cps := undoHistory()
	return &approvals.ChangeLog{
		Recorder: &changes.Recorder{Store: cps.Store(), Keep: keep},
		Save: func(ch *changes.Change, summary string) error {
			_, err := cps.RecordCommand(ch, summary)
			return err
		},
	}
}

// printChanges is the terminal line saying what a run changed.
func printChanges(w io.Writer, name string, c *approvals.RunChanges) {
	if c == nil {
		return
	}
	line := command.EscapeLines(c.Summary)
	switch {
	case c.Recorded && c.Overlapped:
		line += " (`warden undo --force` reverts it, with what ran beside it)"
	case c.Recorded:
		line += " (`warden undo` reverts it)"
	}
	fmt.Fprintf(w, "warden %s: %s\n", name, line)
}
