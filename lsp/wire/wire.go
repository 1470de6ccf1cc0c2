package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wardenhq/warden/lsp/textdoc"
	"go.lsp.dev/protocol"
)

// Wire types that go.lsp.dev/protocol v0.12.0 lacks or gets wrong (LSP 3.16+
// shapes). See ../shared/reference/editors-and-lsp.md, Part 2 §1.

// WorkspaceEdit is LSP 3.16's WorkspaceEdit: documentChanges may mix text
// edits with file operations, applied in order, and edits may carry change
// annotations.
type WorkspaceEdit struct {
	Changes           map[protocol.DocumentURI][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges   []DocumentChange                             `json:"documentChanges,omitempty"`
	ChangeAnnotations map[string]protocol.ChangeAnnotation         `json:"changeAnnotations,omitempty"`
}

// DocumentChange is one entry of documentChanges: exactly one field is set.
type DocumentChange struct {
	TextDocumentEdit *TextDocumentEdit
	CreateFile       *protocol.CreateFile
	RenameFile       *protocol.RenameFile
	DeleteFile       *protocol.DeleteFile
}

// TextDocumentEdit edits one document. TextDocument.Version nil means "the
// file as on disk"; otherwise the edit applies only to that buffer version.
type TextDocumentEdit struct {
	TextDocument protocol.OptionalVersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []AnnotatedTextEdit                              `json:"edits"`
}

// AnnotatedTextEdit is a TextEdit that may name a change annotation. Send an
// AnnotationID only to clients with ClientCapabilities.ChangeAnnotations.
type AnnotatedTextEdit struct {
	Range        protocol.Range `json:"range"`
	NewText      string         `json:"newText"`
	AnnotationID string         `json:"annotationId,omitempty"`
}

func (c DocumentChange) MarshalJSON() ([]byte, error) {
	switch {
	case c.TextDocumentEdit != nil:
		return json.Marshal(c.TextDocumentEdit)
	case c.CreateFile != nil:
		v := *c.CreateFile
		v.Kind = protocol.CreateResourceOperation
		return json.Marshal(v)
	case c.RenameFile != nil:
		v := *c.RenameFile
		v.Kind = protocol.RenameResourceOperation
		return json.Marshal(v)
	case c.DeleteFile != nil:
		v := *c.DeleteFile
		v.Kind = protocol.DeleteResourceOperation
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("empty DocumentChange: set one of its fields")
}

func (c *DocumentChange) UnmarshalJSON(data []byte) error {
	var probe struct {
		Kind         string          `json:"kind"`
		TextDocument json.RawMessage `json:"textDocument"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*c = DocumentChange{}
	switch probe.Kind {
	case "create":
		c.CreateFile = new(protocol.CreateFile)
		return json.Unmarshal(data, c.CreateFile)
	case "rename":
		c.RenameFile = new(protocol.RenameFile)
		return json.Unmarshal(data, c.RenameFile)
	case "delete":
		c.DeleteFile = new(protocol.DeleteFile)
		return json.Unmarshal(data, c.DeleteFile)
	case "":
		if len(probe.TextDocument) == 0 {
			return fmt.Errorf("documentChanges entry has neither kind nor textDocument")
		}
		c.TextDocumentEdit = new(TextDocumentEdit)
		return json.Unmarshal(data, c.TextDocumentEdit)
	}
	return fmt.Errorf("documentChanges entry has unknown kind %q", probe.Kind)
}

// ApplyWorkspaceEditParams is the parameter of workspace/applyEdit.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult is the client's answer to workspace/applyEdit
// (protocol's Client.ApplyEdit decodes it as a bool and always fails).
// Neovim answers applied=true even when it skipped a stale edit: verify
// through the didChange versions that follow.
type ApplyWorkspaceEditResult struct {
	Applied       bool    `json:"applied"`
	FailureReason string  `json:"failureReason,omitempty"`
	FailedChange  *uint32 `json:"failedChange,omitempty"`
	// Warden is the Neovim plugin's extension: what its review made of each
	// change. Other clients leave it out.
	Warden *ReviewOutcome `json:"warden,omitempty"`
}

// ReviewOutcome is what the user decided in Warden's review, change by change.
type ReviewOutcome struct {
	Changes []ReviewedChange `json:"changes"`
}

// ReviewedChange is one file's outcome in the review: accepted, edited
// (applied as the user edited it), rejected, stale or failed.
type ReviewedChange struct {
	URI     protocol.DocumentURI `json:"uri"`
	OldURI  protocol.DocumentURI `json:"oldUri,omitempty"`
	Outcome string               `json:"outcome"`
}

// EditedByUser lists the paths the user edited before accepting them.
func (r ApplyWorkspaceEditResult) EditedByUser() map[string]bool { return r.reviewed("edited") }

// LeftAsTheyWere lists the paths the review did not touch: rejected, or
// stale and so never applied. No didChange will come for them.
func (r ApplyWorkspaceEditResult) LeftAsTheyWere() map[string]bool {
	return r.reviewed("rejected", "stale")
}

// reviewed lists the paths of the changes whose outcome is one of outcomes.
func (r ApplyWorkspaceEditResult) reviewed(outcomes ...string) map[string]bool {
	paths := map[string]bool{}
	if r.Warden == nil {
		return paths
	}
	for _, c := range r.Warden.Changes {
		if !slices.Contains(outcomes, c.Outcome) {
			continue
		}
		for _, u := range []protocol.DocumentURI{c.URI, c.OldURI} {
			if u != "" {
				if p := textdoc.URIToPath(u); p != "" {
					paths[p] = true
				}
			}
		}
	}
	return paths
}

// ShowDocumentParams asks the client to show a URI (LSP 3.16). takeFocus is
// always sent: Neovim 0.10+ treats a missing takeFocus as true and would pull
// the cursor into the file the agent is reading.
type ShowDocumentParams struct {
	URI       protocol.URI    `json:"uri"`
	External  bool            `json:"external,omitempty"`
	TakeFocus bool            `json:"takeFocus"`
	Selection *protocol.Range `json:"selection,omitempty"`
}

// ShowDocumentResult is the client's answer to window/showDocument.
type ShowDocumentResult struct {
	Success bool `json:"success"`
}

// CodeAction is LSP 3.16's code action with Warden's WorkspaceEdit. Data is
// kept by the client between textDocument/codeAction and codeAction/resolve.
type CodeAction struct {
	Title       string                      `json:"title"`
	Kind        protocol.CodeActionKind     `json:"kind,omitempty"`
	Diagnostics []protocol.Diagnostic       `json:"diagnostics,omitempty"`
	IsPreferred bool                        `json:"isPreferred,omitempty"`
	Disabled    *protocol.CodeActionDisable `json:"disabled,omitempty"`
	Edit        *WorkspaceEdit              `json:"edit,omitempty"`
	Command     *protocol.Command           `json:"command,omitempty"`
	Data        json.RawMessage             `json:"data,omitempty"`
}

// ProgressValue is a $/progress value. Percentage is a pointer so that 0% is
// sent (protocol's uint32+omitempty drops it and clients show a spinner).
type ProgressValue struct {
	Kind        string  `json:"kind"`
	Title       string  `json:"title,omitempty"`
	Cancellable *bool   `json:"cancellable,omitempty"`
	Message     string  `json:"message,omitempty"`
	Percentage  *uint32 `json:"percentage,omitempty"`
}

// ProgressParams is $/progress with the token as a plain JSON value
// (protocol.ProgressToken marshals as {} when passed by value).
type ProgressParams struct {
	Token json.RawMessage `json:"token"`
	Value any             `json:"value"`
}

// CancelParams decodes $/cancelRequest. The library's CancelParams loses
// numeric ids (they decode as float64 and match nothing).
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// IDKey normalises a JSON-RPC id (or progress token) for map lookups: numbers
// as #N, strings quoted, so 5 and "5" differ.
func IDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return fmt.Sprintf("%q", s), true
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != float64(int64(f)) {
		return "", false
	}
	return fmt.Sprintf("#%d", int64(f)), true
}

// Percent is a job's percentage as $/progress sends it: nil (no
// percentage) for a negative p, else p capped at 100.
func Percent(p int) *uint32 {
	if p < 0 {
		return nil
	}
	v := uint32(min(p, 100))
	return &v
}
