package sandbox

// WriteRecord hears, before each change, the paths a sandboxed command is
// about to change in Roots: created, written, removed, moved or chmodded.
// Warden's record of what a run changed (internal/changes) keeps each
// file as it was, so the run can be undone, at a cost that grows with
// what the command changes, not with the size of the roots. Only where
// RecordsWrites says so.
type WriteRecord struct {
	// Roots are absolute, links resolved.
	Roots []string
	// Before is called, one call at a time and in the order of the
	// calls, with each path (absolute) before the change and how it may
	// change. The command's call waits until it returns, except for
	// ChangeNew.
	Before func(path string, how Change)
}

// Change says how a path reported to a WriteRecord may change.
type Change int

const (
	// ChangeEntry: the entry at the path may be made, written, removed
	// or chmodded.
	ChangeEntry Change = iota
	// ChangeTree: the entry may move, with everything below it.
	ChangeTree
	// ChangeLinked: a file outside the roots may be written or chmodded,
	// and it has other names on a root's file system (hard links), which
	// change with it.
	ChangeLinked
	// ChangeNew: nothing was at the path when the call came; it may make
	// it. The call does not wait for Before.
	ChangeNew
)

// awaitRecord waits until every report is heard: the helper closes its end
// once the command and all it started are gone (or dies), and reports of
// new paths go unanswered, so some may still wait in the socket.
func (p *Process) awaitRecord() {
	if p.recordDone != nil {
		<-p.recordDone
	}
}
