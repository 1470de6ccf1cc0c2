package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/patchedit"
)

func init() {
	RegisterCommand(Command{Name: "warden.patch.apply", Title: "Applying a patch", Start: startPatchApply})
	RegisterCommand(Command{Name: "warden.undo", Title: "Undoing Warden's last change", Start: startUndo})
}

// patchApplyArgs is warden.patch.apply's argument: the patch text (Codex
// format or a unified/git diff) and optionally the workspace root its paths
// are relative to (default: the first workspace folder).
type patchApplyArgs struct {
	Patch string `json:"patch"`
	Root  string `json:"root,omitempty"`
}

// undoArgs is warden.undo's optional argument.
type undoArgs struct {
	// Force undoes even when the files were edited since Warden's change,
	// throwing those edits away.
	Force bool   `json:"force,omitempty"`
	Root  string `json:"root,omitempty"`
	// Steps is how many recorded changes to revert, newest first (patches
	// and commands alike); 0 is 1.
	Steps int `json:"steps,omitempty"`
}

func startPatchApply(s *Server, args []json.RawMessage) (JobFunc, error) {
	var a patchApplyArgs
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] == '"' {
		if err := DecodeArg(args, 0, &a.Patch); err != nil {
			return nil, err
		}
	} else if err := DecodeArg(args, 0, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Patch) == "" {
		return nil, InvalidParams("arguments[0].patch is empty: pass the patch text")
	}
	if a.Root != "" && !filepath.IsAbs(a.Root) {
		return nil, InvalidParams("arguments[0].root must be an absolute path, got %q", a.Root)
	}
	return func(ctx context.Context, job *jobs.Job) (string, error) {
		job.Report("checking the patch", -1)
		root := s.patchRoots(a.Root)[0]
		res, err := s.applyPatchText(ctx, a.Patch, root, "")
		if err != nil {
			return "", err
		}
		if !res.Complete() {
			job.Show(protocol.MessageTypeWarning, "Warden: "+res.Outcome("patch"))
		}
		return strings.TrimSpace(res.String()), nil
	}, nil
}

// applyPatchText takes a patch through the whole review path: parse, compute
// against the editor's buffers, approval when the patch touches files that
// need it, one workspace/applyEdit, then a read-back of what landed (with a
// checkpoint for warden.undo).
func (s *Server) applyPatchText(ctx context.Context, text, root, justification string) (*patch.Result, error) {
	changes, err := patch.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("the patch was not applied, nothing changed: %w", err)
	}
	ws := s.PatchWorkspace()
	plan, err := patch.Prepare(changes, ws, patch.Options{Root: root, WritableRoots: s.Config().WritableRoots, Protected: config.ProtectedPaths(s.Config(), s.workspaceRoots()...)})
	if err != nil {
		return nil, fmt.Errorf("the patch was not applied, nothing changed: %w", err)
	}
	approval, err := s.approvePatch(ctx, plan, justification)
	if err != nil {
		return nil, err
	}
	if !approval.Approved {
		return nil, fmt.Errorf("the patch was not applied: %s", approval.Refused)
	}
	return patch.Apply(ctx, ws, plan, s.Checkpoints())
}

// approvePatch asks the connection's approvals orchestrator whether the plan
// may land, the same way the agent's patches are asked about
// (agent.ApprovePlan: policy, per-file session approvals, flagged files).
func (s *Server) approvePatch(ctx context.Context, plan *patch.Plan, justification string) (*approvals.PatchApproval, error) {
	o, sb, err := s.Orchestrator(plan.Root)
	if err != nil {
		return nil, err
	}
	return agent.ApprovePlan(ctx, o, sb, plan, justification)
}

type checkpointsKey struct{}

// Checkpoints is where patches applied through this server record what they
// changed, for warden.undo: the state directory, so undo survives a restart.
func (s *Server) Checkpoints() *patch.Checkpoints {
	return s.Value(checkpointsKey{}, func() any {
		return patch.NewCheckpoints(filepath.Join(config.StateDir(), "checkpoints"))
	}).(*patch.Checkpoints)
}

// patchRoots lists the roots a patch or undo may concern: the one asked for,
// else the workspace folders, else the working directory. Never empty.
func (s *Server) patchRoots(asked string) []string {
	if asked != "" {
		return []string{filepath.Clean(asked)}
	}
	var roots []string
	for _, f := range s.WorkspaceFolders() {
		if f.Path != "" {
			roots = append(roots, f.Path)
		}
	}
	if len(roots) == 0 {
		dir, _ := filepath.Abs(".")
		roots = append(roots, dir)
	}
	return roots
}

func startUndo(s *Server, args []json.RawMessage) (JobFunc, error) {
	var a undoArgs
	if len(args) > 0 && string(args[0]) != "null" {
		if err := DecodeArg(args, 0, &a); err != nil {
			return nil, err
		}
	}
	if a.Root != "" && !filepath.IsAbs(a.Root) {
		return nil, InvalidParams("arguments[0].root must be an absolute path, got %q", a.Root)
	}
	if a.Steps < 0 {
		return nil, InvalidParams("arguments[0].steps must be at least 1, got %d", a.Steps)
	}
	return func(ctx context.Context, job *jobs.Job) (string, error) {
		var undid []string
		for step := 0; step < max(a.Steps, 1); step++ {
			summary, incomplete, err := undoOnce(ctx, s, job, a)
			if err != nil && len(undid) > 0 && errors.Is(err, patch.ErrNothingToUndo) {
				break // fewer changes recorded than steps asked for
			}
			if err != nil {
				if len(undid) > 0 {
					err = fmt.Errorf("%s, then: %w", strings.Join(undid, "; "), err)
				}
				return "", err
			}
			if incomplete != "" {
				return strings.Join(append(undid, incomplete), "; "), nil
			}
			undid = append(undid, "undid "+summary)
		}
		return strings.Join(undid, "; "), nil
	}, nil
}

// undoOnce reverts the most recent change among the roots a asks about;
// incomplete says what the editor left undone, if anything.
func undoOnce(ctx context.Context, s *Server, job *jobs.Job, a undoArgs) (summary, incomplete string, err error) {
	cps := s.Checkpoints()
	roots := s.patchRoots(a.Root)
	root, newest, err := cps.LastOf(roots...)
	if err != nil {
		return "", "", err
	}
	if newest == nil {
		return "", "", cps.NothingToUndo(roots...)
	}
	job.Report("undoing "+newest.Summary, -1)
	res, err := cps.Undo(ctx, s.PatchWorkspace(), root, a.Force)
	if errors.Is(err, patch.ErrNeedsForce) {
		return "", "", fmt.Errorf("%w (run warden.undo with {\"force\": true})", err)
	}
	if err != nil {
		return "", "", err
	}
	if !res.Complete() {
		job.Show(protocol.MessageTypeWarning, "Warden: "+res.Outcome("undo")+" (undo of "+newest.Summary+")")
		return newest.Summary, "undo incomplete: " + strings.TrimSpace(res.String()), nil
	}
	if len(newest.Lost) > 0 {
		return newest.Summary + " (not recovered, their content was not kept: " + strings.Join(newest.Lost, ", ") + ")", "", nil
	}
	return newest.Summary, "", nil
}

// PatchWorkspace returns the editor-backed patch workspace of this connection.
func (s *Server) PatchWorkspace() *patchedit.Workspace {
	return patchedit.New(s.Client(), s.Docs())
}
