package patchedit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// Workspace is the patch.Workspace of the editor: a plan becomes one
// workspace/applyEdit, and what the editor really did is read back from the
// documents afterwards. Files are read as the editor has them (open buffers,
// unsaved text included), so patches apply to what the user sees.
type Workspace struct {
	editor Editor
	docs   *textdoc.Store
	// Settle bounds how long Apply waits for the editor's didOpen/didChange
	// after it answered (Neovim sends didChange 150 ms late, and answers
	// applied=true even for an edit it skipped).
	Settle time.Duration
}

// Editor is what the workspace asks of the editor's connection.
type Editor interface {
	// Capabilities are the flags the client announced.
	Capabilities() wire.ClientCapabilities
	// ApplyEdit sends workspace/applyEdit and returns the client's answer.
	ApplyEdit(ctx context.Context, params *wire.ApplyWorkspaceEditParams) (wire.ApplyWorkspaceEditResult, error)
}

// New returns the patch workspace of an editor whose open
// buffers docs mirrors.
func New(editor Editor, docs *textdoc.Store) *Workspace {
	return &Workspace{editor: editor, docs: docs, Settle: 2 * time.Second}
}

// ReadFile reads the open buffer, or the disk for files the editor has not open.
func (w *Workspace) ReadFile(path string) ([]byte, int32, bool, error) {
	return w.docs.ReadFile(path)
}

// Apply sends the plan as one workspace/applyEdit and reports, file by file
// and hunk by hunk, what the documents show afterwards.
func (w *Workspace) Apply(ctx context.Context, plan *patch.Plan) (*patch.Result, error) {
	caps := w.editor.Capabilities()
	if !caps.ApplyEdit {
		return nil, errors.New("the editor cannot apply workspace edits (it did not announce workspace.applyEdit); nothing was changed")
	}
	// An open buffer that moved on since the plan was made would make the
	// editor skip (Neovim) or refuse (VS Code) the edit: say so up front.
	for _, f := range plan.Files {
		if !f.Open {
			continue
		}
		if v, open := w.docs.Version(textdoc.PathToURI(f.Path)); !open || v != f.Version {
			return nil, fmt.Errorf("%s changed in the editor since the patch was checked (version %d, now %d); nothing was changed, run the patch again", f.Rel, f.Version, v)
		}
	}
	editorPlan, diskPlan, err := splitByResourceOps(plan, caps)
	if err != nil {
		return nil, err
	}
	if len(editorPlan.Files) == 0 {
		return patch.Disk{}.Apply(ctx, diskPlan)
	}
	res, err := w.applyInEditor(ctx, editorPlan)
	if err == nil && res.Complete() {
		err = setModes(editorPlan)
	}
	if err != nil || len(diskPlan.Files) == 0 {
		return res, err
	}
	// The editor's part first: it is the part the user may still decline
	// (eglot asks before applying a server's edit). The files only Warden
	// can create, delete or move follow only when all of it landed.
	var diskRes *patch.Result
	if res.Complete() {
		diskRes, err = patch.Disk{}.Apply(ctx, diskPlan)
		if err != nil {
			diskRes = notDone(diskPlan, "not changed on disk: "+err.Error()+"; the editor's part landed, warden.undo reverts it")
		}
	} else {
		diskRes = notDone(diskPlan, "not done: the editor's part of the patch did not land, and a patch lands whole or not at all")
	}
	return mergeResults(plan, editorPlan, res, diskRes), nil
}

// applyInEditor sends the plan as one workspace/applyEdit and verifies it.
func (w *Workspace) applyInEditor(ctx context.Context, plan *patch.Plan) (*patch.Result, error) {
	caps := w.editor.Capabilities()
	// Neovim 0.7 cannot create a file in a directory that does not exist
	// (and then abandons the rest of the edit): make the directories first,
	// and remove them again if nothing ends up in them.
	made, err := makeParents(plan)
	defer removeEmpty(made)
	if err != nil {
		return nil, err
	}
	params := &wire.ApplyWorkspaceEditParams{Label: "Warden: " + plan.Summary(), Edit: workspaceEditFor(plan, caps.ChangeAnnotations)}
	answer, err := w.editor.ApplyEdit(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("the editor did not apply the patch: %w", err)
	}
	return w.verify(ctx, plan, answer), nil
}

// setModes gives the files the editor edited the mode the plan restores
// (an undo of a command's chmod): an edit cannot say it, the disk holds it.
func setModes(plan *patch.Plan) error {
	for _, f := range plan.Files {
		if f.SetsMode {
			if err := os.Chmod(f.Path, f.Mode.Perm()); err != nil {
				return fmt.Errorf("the editor's part landed, but the mode of %s was not restored: %w; run chmod %o %s", f.Rel, err, f.Mode.Perm(), f.Rel)
			}
		}
	}
	return nil
}

// makeParents creates the missing directories of files the plan creates or
// moves to, returning them outermost first.
func makeParents(plan *patch.Plan) ([]string, error) {
	var made []string
	for _, f := range plan.Files {
		target := ""
		switch {
		case f.MoveTo != "":
			target = f.MoveTo
		case f.Change.Kind == patch.Add && !f.Existed:
			target = f.Path
		default:
			continue
		}
		var missing []string
		for d := filepath.Dir(target); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
				break
			}
			missing = append([]string{d}, missing...)
		}
		for _, d := range missing {
			if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return made, fmt.Errorf("create directory %s for %s: %w; nothing was changed", d, f.Rel, err)
			}
			made = append(made, d)
		}
	}
	return made, nil
}

// removeEmpty removes directories (innermost first) that stayed empty.
func removeEmpty(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, when not empty
	}
}

// workspaceEditFor turns a plan into documentChanges, in plan order. With
// annotations every hunk and file operation asks for confirmation, so VS
// Code's Refactor Preview lets the user accept them one by one.
//
// Neovim 0.7 bugs shape the file operations: CreateFile with ignoreIfExists
// never creates the file and without options truncates an existing one, and
// RenameFile with ignoreIfExists is always skipped. So files are created
// only when they do not exist, replaced by a whole-text edit when they do,
// and renamed with overwrite only.
func workspaceEditFor(plan *patch.Plan, annotate bool) wire.WorkspaceEdit {
	var we wire.WorkspaceEdit
	if annotate {
		we.ChangeAnnotations = map[string]protocol.ChangeAnnotation{}
	}
	note := func(id, label, description string) string {
		if !annotate {
			return ""
		}
		we.ChangeAnnotations[id] = protocol.ChangeAnnotation{Label: label, NeedsConfirmation: true, Description: description}
		return id
	}
	add := func(c wire.DocumentChange) { we.DocumentChanges = append(we.DocumentChanges, c) }
	for fi := range plan.Files {
		f := &plan.Files[fi]
		uri := textdoc.PathToURI(f.Path)
		version := func() *int32 {
			if f.Open {
				v := f.Version
				return &v
			}
			return nil // a closed file: the disk content is what was patched
		}
		switch {
		case f.Deleted():
			id := note(fmt.Sprintf("f%d", fi), "Delete "+f.Rel, "")
			add(wire.DocumentChange{DeleteFile: &protocol.DeleteFile{URI: uri, AnnotationID: protocol.ChangeAnnotationIdentifier(id)}})
		case f.Change.Kind == patch.Add && !f.Existed:
			id := note(fmt.Sprintf("f%d", fi), "Create "+f.Rel, "")
			add(wire.DocumentChange{CreateFile: &protocol.CreateFile{URI: uri, AnnotationID: protocol.ChangeAnnotationIdentifier(id)}})
			if f.After != "" {
				add(wire.DocumentChange{TextDocumentEdit: &wire.TextDocumentEdit{
					TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}},
					Edits:        []wire.AnnotatedTextEdit{{Range: protocol.Range{}, NewText: f.After, AnnotationID: id}},
				}})
			}
		case f.Change.Kind == patch.Add:
			// Add over an existing file replaces its whole text.
			id := note(fmt.Sprintf("f%d", fi), "Replace "+f.Rel, "the patch adds a file that exists")
			starts := textdoc.LineStarts(f.Before)
			add(wire.DocumentChange{TextDocumentEdit: &wire.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: version()},
				Edits: []wire.AnnotatedTextEdit{{
					Range:   protocol.Range{End: textdoc.PositionAt(f.Before, starts, len(f.Before))},
					NewText: f.After, AnnotationID: id,
				}},
			}})
		default: // update, perhaps with a move
			if len(f.Edits) > 0 {
				starts := textdoc.LineStarts(f.Before)
				edits := make([]wire.AnnotatedTextEdit, 0, len(f.Edits))
				for _, e := range f.Edits {
					start, end, text := changedPart(f.Before, e)
					line := strings.Count(f.Before[:start], "\n") + 1
					id := note(fmt.Sprintf("f%dh%d", fi, e.Hunk), fmt.Sprintf("%s: chunk %d (line %d)", f.Rel, e.Hunk+1, line), "")
					edits = append(edits, wire.AnnotatedTextEdit{
						Range:   protocol.Range{Start: textdoc.PositionAt(f.Before, starts, start), End: textdoc.PositionAt(f.Before, starts, end)},
						NewText: text, AnnotationID: id,
					})
				}
				add(wire.DocumentChange{TextDocumentEdit: &wire.TextDocumentEdit{
					TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: version()},
					Edits:        edits,
				}})
			}
			if f.MoveTo != "" {
				id := note(fmt.Sprintf("f%dm", fi), "Move "+f.Rel+" to "+f.RelTo, "")
				var opts *protocol.RenameFileOptions
				if f.DestExisted {
					opts = &protocol.RenameFileOptions{Overwrite: true}
				}
				add(wire.DocumentChange{RenameFile: &protocol.RenameFile{OldURI: uri, NewURI: textdoc.PathToURI(f.MoveTo), Options: opts, AnnotationID: protocol.ChangeAnnotationIdentifier(id)}})
			}
		}
	}
	return we
}

// changedPart narrows an edit to the text it changes: the lines it keeps at
// either end (the hunk's context) and a final line break both sides share
// are left out, so that VS Code's Refactor Preview shows a row as
// "line 2 → line two", not "line 1⏎line 2⏎line 3⏎…". The document comes out
// the same, so reading back which hunks landed is unchanged.
func changedPart(before string, e patch.Edit) (start, end int, text string) {
	start, end, text = e.Start, e.End, e.Text
	old := before[start:end]
	for {
		i, j := strings.IndexByte(old, '\n'), strings.IndexByte(text, '\n')
		if i < 0 || j < 0 || old[:i+1] != text[:j+1] {
			break
		}
		old, text, start = old[i+1:], text[j+1:], start+i+1
	}
	for strings.HasSuffix(old, "\n") && strings.HasSuffix(text, "\n") {
		lastOld := old[strings.LastIndexByte(old[:len(old)-1], '\n')+1:]
		lastNew := text[strings.LastIndexByte(text[:len(text)-1], '\n')+1:]
		if lastOld != lastNew {
			break
		}
		old, text, end = old[:len(old)-len(lastOld)], text[:len(text)-len(lastNew)], end-len(lastOld)
	}
	if brk := lineBreakAtEnd(old); brk != "" && brk == lineBreakAtEnd(text) && len(old) > len(brk) && len(text) > len(brk) {
		text, end = text[:len(text)-len(brk)], end-len(brk)
	}
	return start, end, text
}

// lineBreakAtEnd is s's final line break ("\r\n" or "\n"), or "".
func lineBreakAtEnd(s string) string {
	switch {
	case strings.HasSuffix(s, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(s, "\n"):
		return "\n"
	}
	return ""
}

// verify waits (up to Settle) until every file shows an outcome, then
// reports what landed. Only the documents are trusted, never the answer
// alone.
func (w *Workspace) verify(ctx context.Context, plan *patch.Plan, answer wire.ApplyWorkspaceEditResult) *patch.Result {
	deadline := time.Now().Add(w.Settle)
	if !answer.Applied {
		// The editor says it failed, but Neovim 0.7 fails half-way through
		// and keeps what it did before: give its (debounced) didChange time.
		deadline = time.Now().Add(min(w.Settle, 500*time.Millisecond))
	}
	// The timer ends the wait at the deadline: a rejected patch brings no
	// didChange to wake the loop.
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	edited, untouched := answer.EditedByUser(), answer.LeftAsTheyWere()
	for {
		changed := w.docs.Changed()
		res, settled := w.inspect(plan, edited, untouched)
		if settled || !time.Now().Before(deadline) {
			for i := range res.Files {
				fr := &res.Files[i]
				if fr.Status != patch.Landed && fr.Reason == "" {
					fr.Reason = notLandedReason(answer, &plan.Files[i])
				}
			}
			return res
		}
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			deadline = time.Now()
		}
	}
}

func notLandedReason(answer wire.ApplyWorkspaceEditResult, f *patch.FileEdit) string {
	switch {
	case !answer.Applied && answer.FailureReason != "":
		return "the editor refused the edit: " + answer.FailureReason
	case !answer.Applied:
		return "the editor refused the edit"
	case !f.Open && !f.Deleted():
		return "the editor did not report this file changed; it was not open, so the change may sit unsaved in a buffer the server does not see"
	}
	return "the editor did not make this change (the user declined it, or the editor skipped it)"
}

// state is what a path looks like now, as the editor reports it.
type state struct {
	text    string
	version int32
	open    bool
	exists  bool
}

func (w *Workspace) state(path string) state {
	data, version, open, err := w.docs.ReadFile(path)
	if err != nil {
		return state{exists: !errors.Is(err, fs.ErrNotExist), open: open}
	}
	return state{text: string(data), version: version, open: open, exists: true}
}

// inspect reports each file's outcome, and whether all of them have settled:
// reached the planned result, or been reported changed by the editor.
// A file the user edited in the review settles once it differs from before:
// what the user accepted is the change, and warden.undo must revert it.
func (w *Workspace) inspect(plan *patch.Plan, edited, untouched map[string]bool) (*patch.Result, bool) {
	res := &patch.Result{Files: make([]patch.FileResult, 0, len(plan.Files))}
	all := true
	for i := range plan.Files {
		f := &plan.Files[i]
		var fr patch.FileResult
		var settled bool
		if edited[f.Path] || (f.MoveTo != "" && edited[f.MoveTo]) {
			fr, settled = w.inspectEdited(f)
		} else {
			fr, settled = w.inspectFile(f)
		}
		// A change the review left alone is settled as it reads now: no
		// edit is on its way.
		settled = settled || untouched[f.Path]
		res.Files = append(res.Files, fr)
		all = all && settled
	}
	return res, all
}

// inspectEdited reports a change the user edited before accepting it: it
// landed when the file (or its move target) no longer looks as before.
func (w *Workspace) inspectEdited(f *patch.FileEdit) (patch.FileResult, bool) {
	fr := patch.FileResult{Path: f.Rel, MoveTo: f.RelTo, Kind: f.Change.Kind, Total: len(f.Edits)}
	now := w.state(f.Path)
	moved := false
	if f.MoveTo != "" && !now.exists {
		now, moved = w.state(f.MoveTo), true
	}
	if moved || now.exists != f.Existed || now.text != f.Before {
		fr.Status, fr.Edited = patch.Landed, true
		return fr, true
	}
	return fr, false
}

func (w *Workspace) inspectFile(f *patch.FileEdit) (patch.FileResult, bool) {
	fr := patch.FileResult{Path: f.Rel, MoveTo: f.RelTo, Kind: f.Change.Kind, Total: len(f.Edits)}
	switch {
	case f.Deleted():
		if now := w.state(f.Path); !now.exists {
			fr.Status = patch.Landed
			return fr, true
		}
		return fr, false
	case f.Change.Kind == patch.Add:
		now := w.state(f.Path)
		if now.exists && now.text == f.After {
			fr.Status = patch.Landed
			return fr, true
		}
		return fr, false
	}
	src := w.state(f.Path)
	now := src
	if f.MoveTo != "" {
		now = w.state(f.MoveTo)
		if !now.exists || src.exists {
			// Not moved (yet): the hunks may still have landed in the source.
			now = src
		}
	}
	moved := f.MoveTo == "" || !src.exists
	// The editor reported a change to a buffer that was open. A file that
	// was closed settles only when its content shows the result: its didOpen
	// may come before the didChange that carries the edit.
	changed := f.Open && now.open && now.version > f.Version
	if !now.exists {
		return fr, false
	}
	landed, ok := patch.LandedHunks(f.Before, now.text, f.Edits)
	switch {
	case !ok:
		fr.Reason = "the document changed in other ways meanwhile; Warden cannot tell which hunks landed"
		return fr, changed
	case len(landed) == len(f.Edits) && moved:
		fr.Status, fr.Hunks = patch.Landed, landed
		return fr, true
	case len(landed) > 0 || (moved && f.MoveTo != ""):
		fr.Status, fr.Hunks = patch.Partial, landed
		if !moved {
			fr.Reason = "not moved to " + f.RelTo
		}
		return fr, changed
	}
	return fr, changed && moved
}
