package patch

import (
	"context"
	"fmt"
	"strings"
)

// Workspace is where a plan lands: on disk (Disk), or in the editor through
// workspace/applyEdit (package lsp). Apply reports what really landed, which
// in an editor may be less than the plan: the user can untick hunks, and a
// stale buffer makes the editor skip an edit.
type Workspace interface {
	Source
	Apply(ctx context.Context, plan *Plan) (*Result, error)
}

// Status is what became of one file change.
type Status int

const (
	NotLanded Status = iota
	Partial          // some hunks landed
	Landed
)

func (s Status) String() string {
	return [...]string{"not applied", "partly applied", "applied"}[s]
}

// FileResult is what became of one file change.
type FileResult struct {
	Path   string // as shown to people (relative to the root when inside it)
	MoveTo string
	Kind   Kind
	Status Status
	// Hunks are the indices of the hunks that landed (updates only), of Total.
	Hunks []int
	Total int
	// Reason says why the change did not (fully) land.
	Reason string
	// Edited is a change the user edited before accepting it: it landed
	// (Status Landed), but as the user wrote it, not as planned.
	Edited bool
}

// Result is what a Workspace reports after applying a plan.
type Result struct {
	// Files are in the plan's order, one per FileEdit.
	Files []FileResult
}

// Complete reports whether every change landed in full.
func (r *Result) Complete() bool {
	for _, f := range r.Files {
		if f.Status != Landed {
			return false
		}
	}
	return true
}

// Any reports whether anything landed.
func (r *Result) Any() bool {
	for _, f := range r.Files {
		if f.Status != NotLanded {
			return true
		}
	}
	return false
}

// String lists each file with a one-letter code, as Codex reports to the
// model (A added, M modified, D deleted, R moved), then anything that did not
// land and why.
func (r *Result) String() string {
	var b strings.Builder
	if r.Complete() {
		b.WriteString("Success. Updated the following files:\n")
	} else if r.Any() {
		b.WriteString("The patch was applied only in part.\n")
	} else {
		b.WriteString("The patch was not applied.\n")
	}
	for _, f := range r.Files {
		code := map[Kind]string{Add: "A", Delete: "D", Update: "M"}[f.Kind]
		name := f.Path
		if f.MoveTo != "" {
			code, name = "R", f.Path+" -> "+f.MoveTo
		}
		switch f.Status {
		case Landed:
			fmt.Fprintf(&b, "%s %s", code, name)
			if f.Edited {
				b.WriteString(" (applied as the user edited it, not as the patch said: read the file before relying on its content)")
			}
			b.WriteString("\n")
		case Partial:
			fmt.Fprintf(&b, "%s %s (only chunks %s of %d applied", code, name, hunkList(f.Hunks), f.Total)
			if f.Reason != "" {
				b.WriteString(": " + f.Reason)
			}
			b.WriteString(")\n")
		default:
			fmt.Fprintf(&b, "not applied: %s", name)
			if f.Reason != "" {
				b.WriteString(" (" + f.Reason + ")")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Outcome says in one line, verdict first, what became of the patch, for a
// notification that may cut its tail: "patch applied: a.txt", "patch applied
// only in part: a.txt (only chunks 1 of 2 applied); not applied: b.txt (the
// user rejected it)", "patch not applied: a.txt (the editor refused the
// edit)". what names the change ("patch", "undo").
func (r *Result) Outcome(what string) string {
	var landed, partial, missed []string
	for _, f := range r.Files {
		name := f.Path
		if f.MoveTo != "" {
			name = f.Path + " -> " + f.MoveTo
		}
		switch f.Status {
		case Landed:
			landed = append(landed, name)
		case Partial:
			detail := fmt.Sprintf("only chunks %s of %d applied", hunkList(f.Hunks), f.Total)
			if f.Reason != "" {
				detail += ": " + f.Reason
			}
			partial = append(partial, fmt.Sprintf("%s (%s)", name, detail))
		default:
			if f.Reason != "" {
				name += " (" + f.Reason + ")"
			}
			missed = append(missed, name)
		}
	}
	switch {
	case r.Complete():
		return what + " applied: " + strings.Join(landed, ", ")
	case !r.Any():
		return what + " not applied: " + strings.Join(missed, "; ")
	}
	parts := append(landed, partial...)
	out := what + " applied only in part: " + strings.Join(parts, "; ")
	if len(missed) > 0 {
		out += "; not applied: " + strings.Join(missed, "; ")
	}
	return out
}

func hunkList(h []int) string {
	parts := make([]string, len(h))
	for i, v := range h {
		parts[i] = fmt.Sprint(v + 1)
	}
	return strings.Join(parts, ", ")
}

// allLanded is the result of a plan that landed in full.
func allLanded(plan *Plan) *Result {
	r := &Result{Files: make([]FileResult, 0, len(plan.Files))}
	for _, f := range plan.Files {
		fr := FileResult{Path: f.Rel, MoveTo: f.RelTo, Kind: f.Change.Kind, Status: Landed, Total: len(f.Edits)}
		for _, e := range f.Edits {
			fr.Hunks = append(fr.Hunks, e.Hunk)
		}
		r.Files = append(r.Files, fr)
	}
	return r
}

// LandedHunks works out which of a file's edits an editor applied, given the
// text before and the text now: the user may have accepted only some hunks.
// ok is false when the text is not before with some subset of the edits
// applied (someone else changed it too).
func LandedHunks(before, current string, edits []Edit) (landed []int, ok bool) {
	type key struct{ i, at int }
	dead := map[key]bool{}
	var walk func(i, prevEnd, at int) bool
	walk = func(i, prevEnd, at int) bool {
		if i == len(edits) {
			return current[at:] == before[prevEnd:]
		}
		if dead[key{i, at}] {
			return false
		}
		e := edits[i]
		gap := before[prevEnd:e.Start]
		if !strings.HasPrefix(current[at:], gap) {
			dead[key{i, at}] = true
			return false
		}
		at += len(gap)
		if strings.HasPrefix(current[at:], e.Text) && walk(i+1, e.End, at+len(e.Text)) {
			landed = append(landed, e.Hunk)
			return true
		}
		if old := before[e.Start:e.End]; strings.HasPrefix(current[at:], old) && walk(i+1, e.End, at+len(old)) {
			return true
		}
		dead[key{i, at - len(gap)}] = true
		return false
	}
	if !walk(0, 0, 0) {
		return nil, false
	}
	// Collected on the way back out: put them in order.
	for i, j := 0, len(landed)-1; i < j; i, j = i+1, j-1 {
		landed[i], landed[j] = landed[j], landed[i]
	}
	return landed, true
}
