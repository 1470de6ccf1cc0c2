package wire

import (
	"encoding/json"
	"slices"
)

// ClientCapabilities are the flags Warden acts on, read from initialize.
type ClientCapabilities struct {
	ApplyEdit bool `json:"applyEdit"`
	// DocumentChanges: workspaceEdit.documentChanges. Neovim 0.7 handles
	// them without advertising it, so do not refuse to send them.
	DocumentChanges    bool     `json:"documentChanges"`
	ResourceOperations []string `json:"resourceOperations,omitempty"`
	FailureHandling    string   `json:"failureHandling,omitempty"`
	// ChangeAnnotations: workspaceEdit.changeAnnotationSupport. Send
	// annotated edits only when set.
	ChangeAnnotations bool `json:"changeAnnotations"`
	// HonorsChangeAnnotations: codeAction.honorsChangeAnnotations.
	HonorsChangeAnnotations bool `json:"honorsChangeAnnotations"`
	ShowDocument            bool `json:"showDocument"`
	WorkDoneProgress        bool `json:"workDoneProgress"`
	// MessageActionProperties: extra fields of a MessageActionItem come back
	// in the showMessageRequest answer.
	MessageActionProperties bool `json:"messageActionProperties"`
	CodeActionLiterals      bool `json:"codeActionLiterals"`
	CodeActionResolve       bool `json:"codeActionResolve"`
	CodeActionData          bool `json:"codeActionData"`
	WorkspaceFolders        bool `json:"workspaceFolders"`
	Configuration           bool `json:"configuration"`
	// AskAgent: experimental.wardenAskAgent. The client prompts the user for
	// the instruction of a warden.agent.run sent without one, so the "Ask
	// agent…" code action may be offered.
	AskAgent bool `json:"askAgent"`
}

// AnnouncedCapabilities is the part of initialize's capabilities Warden
// reads, decoded loosely so unknown shapes never fail initialize.
type AnnouncedCapabilities struct {
	Workspace struct {
		ApplyEdit     bool `json:"applyEdit"`
		WorkspaceEdit struct {
			DocumentChanges         bool      `json:"documentChanges"`
			ResourceOperations      []string  `json:"resourceOperations"`
			FailureHandling         string    `json:"failureHandling"`
			ChangeAnnotationSupport *struct{} `json:"changeAnnotationSupport"`
		} `json:"workspaceEdit"`
		WorkspaceFolders bool `json:"workspaceFolders"`
		Configuration    bool `json:"configuration"`
	} `json:"workspace"`
	TextDocument struct {
		CodeAction struct {
			CodeActionLiteralSupport *struct{} `json:"codeActionLiteralSupport"`
			DataSupport              bool      `json:"dataSupport"`
			ResolveSupport           *struct {
				Properties []string `json:"properties"`
			} `json:"resolveSupport"`
			HonorsChangeAnnotations bool `json:"honorsChangeAnnotations"`
		} `json:"codeAction"`
	} `json:"textDocument"`
	Window struct {
		WorkDoneProgress bool `json:"workDoneProgress"`
		ShowMessage      struct {
			MessageActionItem struct {
				AdditionalPropertiesSupport bool `json:"additionalPropertiesSupport"`
			} `json:"messageActionItem"`
		} `json:"showMessage"`
		ShowDocument struct {
			Support bool `json:"support"`
		} `json:"showDocument"`
	} `json:"window"`
	// Experimental is free-form; read in flags so no shape fails initialize.
	Experimental json.RawMessage `json:"experimental"`
}

// Flags are the announced capabilities Warden acts on.
func (w AnnouncedCapabilities) Flags() ClientCapabilities {
	ws, td, win := w.Workspace, w.TextDocument, w.Window
	return ClientCapabilities{
		ApplyEdit:               ws.ApplyEdit,
		DocumentChanges:         ws.WorkspaceEdit.DocumentChanges,
		ResourceOperations:      ws.WorkspaceEdit.ResourceOperations,
		FailureHandling:         ws.WorkspaceEdit.FailureHandling,
		ChangeAnnotations:       ws.WorkspaceEdit.ChangeAnnotationSupport != nil,
		HonorsChangeAnnotations: td.CodeAction.HonorsChangeAnnotations,
		ShowDocument:            win.ShowDocument.Support,
		WorkDoneProgress:        win.WorkDoneProgress,
		MessageActionProperties: win.ShowMessage.MessageActionItem.AdditionalPropertiesSupport,
		CodeActionLiterals:      td.CodeAction.CodeActionLiteralSupport != nil,
		CodeActionResolve:       td.CodeAction.ResolveSupport != nil,
		CodeActionData:          td.CodeAction.DataSupport,
		WorkspaceFolders:        ws.WorkspaceFolders,
		Configuration:           ws.Configuration,
		AskAgent:                experimentalFlag(w.Experimental, "wardenAskAgent"),
	}
}

// experimentalFlag reads a boolean from capabilities.experimental; any
// other shape means false.
func experimentalFlag(raw json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	var v bool
	return json.Unmarshal(m[name], &v) == nil && v
}

// SupportsResourceOperation reports whether the client applies create,
// rename or delete operations in workspace edits.
func (c ClientCapabilities) SupportsResourceOperation(kind string) bool {
	return slices.Contains(c.ResourceOperations, kind)
}
