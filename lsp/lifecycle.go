package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

func init() {
	handle("initialize", (*Server).initialize)
	handle("initialized", (*Server).initialized)
	handle("shutdown", (*Server).shutdown)
}

// ClientInfo is the client's self-description from initialize.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

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

// initializeParams is the part of InitializeParams Warden reads, decoded
// loosely so unknown capability shapes never fail initialize.
type initializeParams struct {
	ProcessID             *int32                `json:"processId"`
	ClientInfo            *ClientInfo           `json:"clientInfo"`
	RootPath              *string               `json:"rootPath"`
	RootURI               *protocol.DocumentURI `json:"rootUri"`
	InitializationOptions json.RawMessage       `json:"initializationOptions"`
	Capabilities          clientCapsWire        `json:"capabilities"`
	WorkspaceFolders      []WorkspaceFolder     `json:"workspaceFolders"`
}

type clientCapsWire struct {
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

func (w clientCapsWire) flags() ClientCapabilities {
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

func (s *Server) initialize(_ context.Context, params json.RawMessage) (any, error) {
	s.mu.Lock()
	already := s.state != stateNew
	s.mu.Unlock()
	if already {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already called on this connection")
	}
	var p initializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	folders, err := initialFolders(p)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	s.state = stateRunning
	s.caps = p.Capabilities.flags()
	if p.ClientInfo != nil {
		s.clientInfo = *p.ClientInfo
	}
	s.folders = folders
	s.mu.Unlock()

	if err := s.mergeSettings(p.InitializationOptions); err != nil {
		// Shown after initialized, when the client may show messages.
		s.mu.Lock()
		s.initSettingsErr = err
		s.mu.Unlock()
	}
	if p.ProcessID != nil {
		s.watchParent(int(*p.ProcessID))
	}
	s.recoverInterrupted(folders)
	s.log.Info("initialize", "client", s.clientInfo.Name, "clientVersion", s.clientInfo.Version, "folders", len(folders))

	return map[string]any{
		"capabilities": s.serverCapabilities(),
		"serverInfo":   map[string]string{"name": "warden", "version": s.opts.Version},
	}, nil
}

func (s *Server) serverCapabilities() map[string]any {
	return map[string]any{
		"textDocumentSync": map[string]any{
			"openClose": true,
			"change":    protocol.TextDocumentSyncKindIncremental,
		},
		"codeActionProvider": map[string]any{
			"codeActionKinds": codeActionKinds(),
			"resolveProvider": true,
		},
		"executeCommandProvider": map[string]any{
			"commands": CommandNames(),
		},
		"workspace": map[string]any{
			"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true},
		},
	}
}

func (s *Server) initialized(context.Context, json.RawMessage) (any, error) {
	if err := s.opts.ConfigErr; err != nil {
		s.client.ShowMessage(protocol.MessageTypeError, fmt.Sprintf("Warden: %v. Using the strictest approval policy until it is fixed.", err))
	}
	s.mu.Lock()
	err := s.initSettingsErr
	s.mu.Unlock()
	if err != nil {
		s.client.ShowMessage(settingsMessage("initializationOptions", err))
	}
	s.showInterrupted()
	s.watchConfigFile()
	// Have a sandbox helper ready for the first command, and for the first
	// after a change of sandbox settings.
	prepareSpare(s.Config())
	s.OnConfigChange(prepareSpare)
	return nil, nil
}

func prepareSpare(cfg config.Config) {
	if pol, err := sandboxPolicy(cfg, nil); err == nil { // a spare depends on no root
		sandbox.PrepareSpare(pol, "")
	}
}

func (s *Server) shutdown(context.Context, json.RawMessage) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.jobs.cancelAll()
	s.log.Info("shutdown")
	return nil, nil
}

// exit ends the connection; the status is 0 only after shutdown.
func (s *Server) exit() {
	s.mu.Lock()
	if s.state == stateShutdown {
		s.exitCode = 0
	}
	s.mu.Unlock()
	s.log.Info("exit")
	s.cancelConn()
}
