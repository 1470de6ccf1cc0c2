package approvals

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/changes"
	"github.com/wardenhq/warden/sandbox"
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

// Prime lists roots in the background for the first run that will list
// them (changes.Recorder.Prime). Nothing is listed under read-only, where
// commands rarely write, nor where the sandbox reports each change as it
// happens (sandbox.RecordsWrites): a sandboxed run lists nothing there,
// and a run without the sandbox lists its roots itself.
func (l *ChangeLog) Prime(mode sandbox.Mode, roots []string) {
	if l == nil || l.Recorder == nil || len(roots) == 0 || mode == sandbox.ReadOnly || sandbox.RecordsWrites(sandbox.Policy{Mode: mode}) {
		return
	}
	l.Recorder.Prime(roots)
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
	// Overlapped: another run changed the workspace at the same time, and
	// undo reverts this one only when forced.
	Overlapped bool
}

// recording is a run being recorded: its snapshot is taken in the
// background while the sandbox prepares the run, and waited for just
// before the command starts.
type recording struct {
	log   *ChangeLog
	spec  RunSpec
	run   *changes.Run
	taken chan struct{}
}

// start begins the snapshot of the roots spec's run may write, or returns
// nil when it writes nowhere Warden records. reported: the sandbox reports
// each change before it happens (sandbox.RecordsWrites), so nothing is
// listed: the record costs what the command changes.
func (l *ChangeLog) start(spec RunSpec, reported bool) *recording {
	if l == nil || l.Recorder == nil || l.Save == nil {
		return nil
	}
	roots := recordedRoots(spec)
	if len(roots) == 0 {
		return nil
	}
	r := &recording{log: l, spec: spec, taken: make(chan struct{})}
	if reported {
		r.run = l.Recorder.BeginTracked(roots, r.label())
		close(r.taken)
		return r
	}
	go func() {
		r.run = l.Recorder.BeginRun(roots, r.label())
		close(r.taken)
	}()
	return r
}

// label names the run's command to people: in the history, and to runs
// beside it.
func (r *recording) label() string { return "`" + command.Display(r.spec.Argv) + "`" }

// sandboxRecord is what the sandbox reports changes to (nil: it need not).
func (r *recording) sandboxRecord() *sandbox.WriteRecord {
	if r == nil {
		return nil
	}
	<-r.taken
	roots := r.run.TrackedRoots()
	if len(roots) == 0 {
		return nil
	}
	return &sandbox.WriteRecord{Roots: roots, Before: func(p string, how sandbox.Change) {
		switch how {
		case sandbox.ChangeLinked:
			r.run.TouchLinked(p)
		case sandbox.ChangeNew:
			r.run.TouchNew(p)
		default:
			r.run.Touch(p, how == sandbox.ChangeTree)
		}
	}}
}

// before makes ready (the run's last step before the command starts, may
// be nil) wait for the snapshot first.
func (r *recording) before(ready func() error) func() error {
	if r == nil {
		return ready
	}
	return func() error {
		<-r.taken
		if ready == nil {
			return nil
		}
		return ready()
	}
}

// cancel ends the recording of a run that did not start.
func (r *recording) cancel() {
	if r != nil {
		<-r.taken
		r.run.Cancel()
	}
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

// finish finds what the run changed, stores it for undo and says it; nil
// when it changed nothing.
func (r *recording) finish() *RunChanges {
	if r == nil {
		return nil
	}
	<-r.taken
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
		out.Overlapped = out.Overlapped || len(ch.Overlapped) > 0
		if err := r.log.Save(ch, r.label()+": "+desc); err != nil {
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
