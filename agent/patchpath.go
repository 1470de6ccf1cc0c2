package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
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
	plan, err := patch.Prepare(changes, p.Workspace, patch.Options{Root: dir, WritableRoots: p.Sandbox.WritableRoots})
	if err != nil {
		return PatchResult{}, err
	}
	req := approvals.PatchRequest{Cwd: dir, Sandbox: p.Sandbox}
	for _, f := range plan.Files {
		pf := approvals.PatchFile{Path: f.Path, MoveTo: f.MoveTo}
		switch {
		case f.MoveTo != "":
			pf.Change = approvals.PatchMove
		case f.Change.Kind == patch.Add:
			pf.Change = approvals.PatchAdd
		case f.Change.Kind == patch.Delete:
			pf.Change = approvals.PatchDelete
		default:
			pf.Change = approvals.PatchUpdate
		}
		req.Files = append(req.Files, pf)
	}
	approval, err := p.Orchestrator.ApprovePatch(ctx, req)
	if err != nil {
		return PatchResult{}, err
	}
	if !approval.Approved {
		res := PatchResult{Verdict: Denied, Reason: approval.Refused}
		switch {
		case approval.Abort:
			res.Verdict = Stopped
		case approval.Evaluation != nil && approval.Evaluation.Decision == approvals.Forbidden:
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
