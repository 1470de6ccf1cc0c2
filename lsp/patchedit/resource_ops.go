package patchedit

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/lsp/wire"
)

// A client that did not announce workspace.workspaceEdit.resourceOperations
// (eglot) skips CreateFile, DeleteFile and RenameFile without a word. Those
// files are written by Warden on disk instead, after the approval and after
// the editor applied the text edits, as long as the editor has none of them
// open: a buffer left on a deleted or moved file would write it back.

// resourceOp names the resource operation a file needs ("" for text only).
func resourceOp(f *patch.FileEdit) string {
	switch {
	case f.Deleted():
		return "delete"
	case f.Change.Kind == patch.Add && !f.Existed:
		return "create"
	case f.MoveTo != "":
		return "rename"
	}
	return ""
}

// bytesOnly reports a file that only a write on disk lands as planned: an
// editor buffer does not hold content that is not UTF-8 or holds NUL bytes
// byte for byte, and a file the editor creates gets the default mode and
// the editor's own line breaks (VS Code turns CRLF into LF on Linux): an
// undo of a command restores all three.
func bytesOnly(f *patch.FileEdit) bool {
	if f.Deleted() {
		return false
	}
	if !utf8.ValidString(f.After) || strings.ContainsRune(f.After, 0) {
		return true
	}
	created := f.Change.Kind == patch.Add && !f.Existed
	return created && (f.Mode != 0 && f.Mode.Perm() != 0o644 || strings.Contains(f.After, "\r"))
}

// splitByResourceOps splits plan into what the editor applies and what
// Warden writes on disk. It refuses, changing nothing, when a file the
// editor cannot delete or move is open in it.
func splitByResourceOps(plan *patch.Plan, caps wire.ClientCapabilities) (editor, disk *patch.Plan, err error) {
	editor = &patch.Plan{Root: plan.Root, Concerns: plan.Concerns}
	disk = &patch.Plan{Root: plan.Root, Concerns: plan.Concerns}
	for _, f := range plan.Files {
		op := resourceOp(&f)
		if !f.OnDisk && (op == "" || caps.SupportsResourceOperation(op)) && (f.Open || !bytesOnly(&f)) {
			editor.Files = append(editor.Files, f)
			continue
		}
		if f.Open || (f.MoveTo != "" && f.DestOpen) {
			name := f.Rel
			if !f.Open {
				name = f.RelTo
			}
			return nil, nil, fmt.Errorf("the patch was not applied, nothing changed: it must %s %s, which is open in the editor, and the editor cannot %s files (it did not announce workspace.workspaceEdit.resourceOperations); close %s without saving and run the patch again", op, f.Rel, op, name)
		}
		disk.Files = append(disk.Files, f)
	}
	return editor, disk, nil
}

// notDone reports every file of plan as not applied, for reason.
func notDone(plan *patch.Plan, reason string) *patch.Result {
	res := &patch.Result{}
	for _, f := range plan.Files {
		res.Files = append(res.Files, patch.FileResult{Path: f.Rel, MoveTo: f.RelTo, Kind: f.Change.Kind, Total: len(f.Edits), Reason: reason})
	}
	return res
}

// mergeResults puts the two parts' results back in the plan's order.
func mergeResults(plan, editorPlan *patch.Plan, editorRes, diskRes *patch.Result) *patch.Result {
	inEditor := map[string]bool{}
	for _, f := range editorPlan.Files {
		inEditor[f.Path] = true
	}
	out := &patch.Result{}
	e, d := 0, 0
	for _, f := range plan.Files {
		if inEditor[f.Path] && e < len(editorRes.Files) {
			out.Files = append(out.Files, editorRes.Files[e])
			e++
		} else if d < len(diskRes.Files) {
			out.Files = append(out.Files, diskRes.Files[d])
			d++
		}
	}
	return out
}
