package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/wire"
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

// initializeParams is the part of InitializeParams Warden reads, decoded
// loosely so unknown capability shapes never fail initialize.
type initializeParams struct {
	ProcessID             *int32                     `json:"processId"`
	ClientInfo            *ClientInfo                `json:"clientInfo"`
	RootPath              *string                    `json:"rootPath"`
	RootURI               *protocol.DocumentURI      `json:"rootUri"`
	InitializationOptions json.RawMessage            `json:"initializationOptions"`
	Capabilities          wire.AnnouncedCapabilities `json:"capabilities"`
	WorkspaceFolders      []WorkspaceFolder          `json:"workspaceFolders"`
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
	s.caps = p.Capabilities.Flags()
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
	s.primeChanges(s.WorkspaceFolders())
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
	s.jobs.CancelAll()
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
