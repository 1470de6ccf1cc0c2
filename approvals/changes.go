package approvals

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/changes"
)

// ChangeLog records what each run that can write changes in the workspace
// roots, and keeps it for undo, in the same history as patches: a
// sandboxed run with write access, or one without the sandbox. Runs that
// cannot write are not recorded.
type ChangeLog struct {
	Recorder *changes.Recorder
	// Save adds one root's change to the undo history under a summary
	// (patch.Checkpoints.RecordCommand, wired by cmd and lsp).
	Save func(ch *changes.Change, summary string) error
}

// RunChanges is what a recorded run changed.
type RunChanges struct {
	// Summary says it in one line: "deleted 31 files under src/ (3 not
	// committed); modified README.md", files the user's tools run first.
	Summary string
	// Lost are the changed files whose previous content was not kept.
	Lost []string
	// Recorded: the changes are in the undo history.
	Recorded bool
}

// recording is a run being recorded.
type recording struct {
	log  *ChangeLog
	run  *changes.Run
	spec RunSpec
}

// begin snapshots the roots spec's run may write, or returns nil when it
// writes nowhere Warden records.
func (l *ChangeLog) begin(spec RunSpec) *recording {
	if l == nil || l.Recorder == nil || l.Save == nil {
		return nil
	}
	roots := recordedRoots(spec)
	if len(roots) == 0 {
		return nil
	}
	return &recording{log: l, run: l.Recorder.Begin(roots), spec: spec}
}

// recordedRoots are the workspace roots the run can write in: all of them
// for a run without the sandbox or under workspace-write, those holding a
// write grant's directory under read-only. Other writable roots ($TMPDIR,
// configured roots) are not recorded.
func recordedRoots(spec RunSpec) []string {
	if spec.Unsandboxed || spec.Sandbox.Mode != ReadOnly {
		return spec.Sandbox.Workspace
	}
	var roots []string
	for _, root := range spec.Sandbox.Workspace {
		for _, w := range spec.Grant.Write {
			if w == root || strings.HasPrefix(w, root+string(filepath.Separator)) {
				roots = append(roots, root)
				break
			}
		}
	}
	return roots
}

// finish finds what the run changed, stores it for undo and says it.
func (r *recording) finish() *RunChanges {
	if r == nil {
		return nil
	}
	out := &RunChanges{Recorded: true}
	var parts []string
	var held func(string) string
	for _, ch := range r.run.Finish() {
		if ch.Empty() {
			continue
		}
		if r.spec.Unsandboxed || len(r.spec.Grant.Write) > 0 {
			// What the sandbox would have held read-only, this run could change.
			if held == nil {
				held = r.spec.Sandbox.Policy().HeldBy()
			}
			ch.Flag(func(rel string) bool { return held(filepath.Join(ch.Root, filepath.FromSlash(rel))) != "" })
		}
		desc := ch.String()
		if len(r.spec.Sandbox.Workspace) > 1 {
			desc = filepath.Base(ch.Root) + ": " + desc
		}
		parts = append(parts, desc)
		out.Lost = append(out.Lost, ch.Lost()...)
		if err := r.log.Save(ch, "`"+command.Display(r.spec.Argv)+"`: "+desc); err != nil {
			out.Recorded = false
			parts = append(parts, "not recorded for undo: "+err.Error())
		}
	}
	if len(parts) == 0 {
		return nil
	}
	out.Summary = strings.Join(parts, "; ")
	return out
}
