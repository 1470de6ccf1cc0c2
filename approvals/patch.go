package approvals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
)

// PatchChange is what a patch does to one file.
type PatchChange string

const (
	PatchAdd    PatchChange = "add"
	PatchUpdate PatchChange = "update"
	PatchDelete PatchChange = "delete"
	PatchMove   PatchChange = "move" // an update that also renames to MoveTo
)

// PatchFile is one file a patch touches. Paths are absolute.
type PatchFile struct {
	Path   string
	Change PatchChange
	MoveTo string
	// Added are the lines the change writes that were not there; the dialog
	// shows them for a file outside the workspace or protected.
	Added []string
}

// PatchRequest asks to apply a patch: the entry point for issue 5's
// apply_patch and `warden.patch.apply`.
type PatchRequest struct {
	Files         []PatchFile
	Cwd           string
	Sandbox       Sandbox // its writable roots decide what is "inside"
	Justification string
	// Flagged are paths the caller's own checks distrust (a symlink leading
	// out, a binary target): they are asked about like protected paths.
	Flagged []string
	// Concerns say, in Warden's words, what its own checks found (the
	// dialog's "Warden flags"), apart from the model's Justification.
	Concerns []string
}

// PatchReasonKind names why a file of a patch needs the user.
type PatchReasonKind string

const (
	OutsideWritableRoots PatchReasonKind = "outside-writable-roots"
	ProtectedPath        PatchReasonKind = "protected-path"
	PolicyAsks           PatchReasonKind = "policy" // the untrusted policy asks for every patch
)

// PatchReason is why one file needs approval.
type PatchReason struct {
	Path string          `json:"path"`
	Kind PatchReasonKind `json:"kind"`
}

// PatchEvaluation is the requirement for a patch.
type PatchEvaluation struct {
	Decision rules.Decision `json:"decision"`
	Reasons  []PatchReason  `json:"reasons"`
	Reason   string         `json:"reason"`
	Risk     risk.Risk      `json:"risk"`
	Keys     []string       `json:"-"` // one session key per touched path
}

// PatchApproval is the outcome: whether the patch may be applied.
type PatchApproval struct {
	Approved   bool
	Evaluation *PatchEvaluation
	Asked      bool
	Decision   ReviewDecision
	Refused    string
	Abort      bool
}

// EvaluatePatch decides whether a patch applies without asking: every file
// inside the writable roots and none protected, under any policy but
// untrusted. Files outside or protected need the user (refused under never
// or when granular rejects patches).
func (o *Orchestrator) EvaluatePatch(req PatchRequest) *PatchEvaluation {
	e := &PatchEvaluation{Reasons: []PatchReason{}}
	if len(req.Files) == 0 {
		e.Decision, e.Reason = rules.Forbidden, "the patch changes no files"
		return e
	}
	home, _ := os.UserHomeDir()
	writable := slices.Clone(req.Sandbox.WritableRoots)
	if req.Sandbox.Mode != ReadOnly {
		writable = append(writable, req.Cwd)
	}
	as := risk.NewAssessor(risk.Context{Cwd: req.Cwd, Sandbox: req.Sandbox.Policy(), Home: home}, writable...)
	held := req.Sandbox.heldBy(req.Cwd)
	var names []string
	for _, f := range req.Files {
		paths := []string{f.Path}
		if f.MoveTo != "" {
			paths = append(paths, f.MoveTo)
		}
		for _, p := range paths {
			p = filepath.Clean(p)
			names = append(names, as.Display(p, false))
			e.Keys = append(e.Keys, PatchFileKey(p))
			switch {
			case req.Sandbox.Mode != DangerFullAccess && !as.Inside(p):
				e.Reasons = append(e.Reasons, PatchReason{p, OutsideWritableRoots})
				as.Add(risk.High, risk.SystemModification, "writes outside the workspace: "+as.Display(p, false))
			case o.protected(p, as.Roots(), req.Cwd, append(slices.Clone(req.Flagged), req.Sandbox.ProtectedPaths...)) || held(p) != "":
				e.Reasons = append(e.Reasons, PatchReason{p, ProtectedPath})
				as.Add(risk.High, risk.SystemModification, "changes a protected path: "+as.Display(p, false))
			}
		}
		if f.Change == PatchDelete {
			size := ""
			if info, err := os.Stat(f.Path); err == nil {
				size = " (" + risk.HumanBytes(info.Size()) + ")"
			}
			as.Add(risk.Medium, risk.DataDeletion, "deletes "+as.Display(f.Path, false)+size)
		}
	}
	e.Risk = as.Found()
	if len(e.Risk.Facts) == 0 {
		e.Risk.Summary = fmt.Sprintf("Edits %d %s inside the workspace", len(req.Files), command.PluralWord(len(req.Files), "file", "files"))
	} else {
		e.Risk.Summary = risk.Summarize(&command.Analysis{}, e.Risk)
	}

	what := strings.Join(names, ", ")
	switch {
	case len(e.Reasons) == 0 && o.Policy.Ask != Untrusted:
		e.Decision, e.Reason = rules.Allow, "every file is inside the writable roots"
		return e
	case len(e.Reasons) == 0:
		e.Reasons = append(e.Reasons, PatchReason{req.Files[0].Path, PolicyAsks})
		e.Reason = "the untrusted policy asks before every patch"
	default:
		var parts []string
		for _, r := range e.Reasons {
			parts = append(parts, fmt.Sprintf("%s (%s)", as.Display(r.Path, false), r.Kind))
		}
		e.Reason = "the patch touches " + strings.Join(parts, ", ")
	}
	if o.Policy.rejects(categoryPatches) {
		e.Decision = rules.Forbidden
		e.Reason = fmt.Sprintf("patch to %s rejected: %s, and the %s policy does not ask", what, e.Reason, o.Policy.Ask)
		return e
	}
	e.Decision = rules.Prompt
	return e
}

// protected reports whether p needs the user: a protected name anywhere
// below a writable root (every .git, as the sandbox keeps every existing one
// read-only and the patch model flags them all), or within a flagged or
// protected path.
func (o *Orchestrator) protected(p string, roots []string, cwd string, flagged []string) bool {
	for _, root := range roots {
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if sandbox.ProtectedRel(rel) {
			return true
		}
	}
	for _, extra := range append(flagged, o.ProtectedPaths...) {
		if !filepath.IsAbs(extra) {
			extra = filepath.Join(cwd, extra)
		}
		if risk.Within(extra, p) {
			return true
		}
	}
	return false
}

// heldBy is the sandbox's answer to what it holds read-only in the roots a
// patch may write, cwd among them (sandbox.Policy.HeldBy): a home
// directory's dot-entries, the PATH directories in a root.
func (s Sandbox) heldBy(cwd string) func(string) string {
	pol := s.Policy()
	if filepath.IsAbs(cwd) {
		pol.Workspace = append(slices.Clone(pol.Workspace), cwd)
	}
	return pol.HeldBy()
}

// ApprovePatch decides whether a patch may be applied, asking the user when
// needed. Session approval is remembered per file: a later patch skips the
// prompt only when every file it touches was approved for the session. The
// caller applies the patch only when Approved is true.
func (o *Orchestrator) ApprovePatch(ctx context.Context, req PatchRequest) (*PatchApproval, error) {
	defer o.commit() // durable before the caller applies it
	ev := o.EvaluatePatch(req)
	out := &PatchApproval{Evaluation: ev}
	files := make([]string, 0, len(req.Files))
	for _, f := range req.Files {
		files = append(files, f.Path)
	}
	o.audit(AuditEvent{Event: "requirement", Kind: "patch", Files: files, Cwd: req.Cwd, Decision: ev.Decision.String(), Reason: ev.Reason, Risk: ev.Risk.Level.String()})
	switch ev.Decision {
	case rules.Allow:
		out.Approved = true
		o.lapseForPatch(files)
		return out, nil
	case rules.Forbidden:
		out.Refused = ev.Reason
		o.audit(AuditEvent{Event: "refused", Kind: "patch", Files: files, Cwd: req.Cwd, Reason: ev.Reason})
		return out, nil
	}
	display := make([]string, 0, len(req.Files))
	as := risk.NewAssessor(risk.Context{Cwd: req.Cwd})
	for _, f := range req.Files {
		display = append(display, as.Display(f.Path, false))
	}
	p := PromptRequest{
		Kind: PromptPatch, Files: display, Cwd: req.Cwd, Justification: req.Justification,
		Reason: ev.Reason, Sandboxed: false, Sandbox: req.Sandbox, Risk: ev.Risk,
		AllowSession: ev.Risk.Level < risk.High, Concerns: req.Concerns,
		Additions: sensitiveAdditions(req, ev, as),
	}
	d, cached, err := o.ask(ctx, p, ev.Keys)
	out.Asked, out.Decision = !cached, d
	if !d.IsApproval() {
		out.Abort = d == Abort
		out.Refused = "patch rejected by user"
		if err != nil {
			out.Refused = fmt.Sprintf("%s; no answer (%v), so the patch was rejected", ev.Reason, err)
		}
		o.audit(AuditEvent{Event: "refused", Kind: "patch", Files: files, Cwd: req.Cwd, Reason: out.Refused})
		return out, nil
	}
	out.Approved = true
	o.lapseForPatch(files)
	return out, nil
}

// lapseForPatch ends the session's unsandboxed approvals: the approved
// patch may change what those commands read.
func (o *Orchestrator) lapseForPatch(files []string) {
	what := "the patch"
	switch len(files) {
	case 0:
	case 1:
		what += " to " + command.EscapeText(files[0])
	default:
		what += fmt.Sprintf(" to %d files", len(files))
	}
	o.session().LapseUnsandboxed(what)
}

// sensitiveAdditions are the added lines of the files Warden asks about for
// where they are (outside the writable roots, protected): what such a patch
// writes there decides the answer, so the dialog shows it before any review.
func sensitiveAdditions(req PatchRequest, ev *PatchEvaluation, as *risk.Assessor) []FileAdditions {
	sensitive := map[string]bool{}
	for _, r := range ev.Reasons {
		if r.Kind == OutsideWritableRoots || r.Kind == ProtectedPath {
			sensitive[filepath.Clean(r.Path)] = true
		}
	}
	var out []FileAdditions
	for _, f := range req.Files {
		target := f.Path
		if f.MoveTo != "" {
			target = f.MoveTo
		}
		if len(f.Added) == 0 || !(sensitive[filepath.Clean(f.Path)] || sensitive[filepath.Clean(target)]) {
			continue
		}
		out = append(out, FileAdditions{File: as.Display(target, false), Lines: f.Added})
	}
	return out
}
