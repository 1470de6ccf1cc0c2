package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/rules"
)

// PatchPath is the review path every apply_patch takes: parse, compute the
// result against what the user sees (Prepare), approval through the
// orchestrator when policy asks, then the workspace (editor edits the user
// reviews, or an atomic disk write). What really landed is reported back.
type PatchPath struct {
	Workspace    patch.Workspace
	Orchestrator *approvals.Orchestrator
	Sandbox      approvals.Sandbox
	// Checkpoints, if set, records each patch for warden.undo.
	Checkpoints *patch.Checkpoints
}

// ApplyPatch implements PatchApplier.
func (p *PatchPath) ApplyPatch(ctx context.Context, input, dir string) (PatchResult, error) {
	if p.Workspace == nil || p.Orchestrator == nil {
		return PatchResult{}, errors.New("patches cannot be applied in this session")
	}
	changes, err := patch.Parse(input)
	if err != nil {
		return PatchResult{}, err
	}
	if err := p.checkHidden(changes, dir); err != nil {
		return PatchResult{Verdict: Forbidden, Reason: err.Error()}, nil
	}
	plan, err := patch.Prepare(changes, p.Workspace, patch.Options{Root: dir, WritableRoots: p.Sandbox.WritableRoots, Protected: p.Sandbox.ProtectedPaths})
	if err != nil {
		return PatchResult{}, err
	}
	approval, err := ApprovePlan(ctx, p.Orchestrator, p.Sandbox, plan, "")
	if err != nil {
		return PatchResult{}, err
	}
	if !approval.Approved {
		res := PatchResult{Verdict: Denied, Reason: approval.Refused}
		switch {
		case approval.Abort:
			res.Verdict = Stopped
		case approval.Evaluation != nil && approval.Evaluation.Decision == rules.Forbidden:
			res.Verdict = Forbidden
		}
		return res, nil
	}
	landed, err := patch.Apply(ctx, p.Workspace, plan, p.Checkpoints)
	if err != nil {
		if landed != nil && landed.Any() {
			// Part of it landed before the failure: the model must know.
			return PatchResult{Summary: fmt.Sprintf("%s\nThen it failed: %v", landed, err)}, nil
		}
		return PatchResult{}, err
	}
	return PatchResult{Summary: landed.String()}, nil
}

// checkHidden refuses a patch that touches a path the read policy hides:
// matching its hunks reads the file (a failed match quotes a line of it), and
// Warden writes no more into a hidden credential store than a sandboxed
// command could see there.
func (p *PatchPath) checkHidden(changes []patch.FileChange, dir string) error {
	guard, err := p.Sandbox.ReadGuard(dir)
	if err != nil {
		return err
	}
	for _, c := range changes {
		for _, name := range []string{c.Path, c.MoveTo} {
			if name == "" {
				continue
			}
			path := filepath.FromSlash(name)
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			if err := guard.Hidden(filepath.Clean(path), ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// ApprovePlan asks the orchestrator whether plan may land. Files the patch
// model flags (symlinks leading out, binaries, protected names) are handed
// over as protected paths, so they are asked about too, and named in the
// dialog.
func ApprovePlan(ctx context.Context, o *approvals.Orchestrator, sb approvals.Sandbox, plan *patch.Plan, justification string) (*approvals.PatchApproval, error) {
	var flagged, flags []string
	for _, c := range plan.Concerns {
		flagged = append(flagged, c.Path)
		flags = append(flags, c.String())
	}
	req := approvals.PatchRequest{Cwd: plan.Root, Sandbox: sb, Justification: justification, Flagged: flagged, Concerns: flags}
	for _, f := range plan.Files {
		pf := approvals.PatchFile{Path: f.Path, MoveTo: f.MoveTo, Change: approvals.PatchUpdate, Added: f.Change.AddedLines()}
		switch {
		case f.MoveTo != "":
			pf.Change = approvals.PatchMove
		case f.Change.Kind == patch.Add:
			pf.Change = approvals.PatchAdd
		case f.Change.Kind == patch.Delete:
			pf.Change = approvals.PatchDelete
		}
		req.Files = append(req.Files, pf)
	}
	return o.ApprovePatch(ctx, req)
}
