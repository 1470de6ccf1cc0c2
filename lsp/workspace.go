package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/textdoc"
)

func init() {
	handle("workspace/didChangeWorkspaceFolders", (*Server).didChangeWorkspaceFolders)
	handle("workspace/didChangeConfiguration", (*Server).didChangeConfiguration)
}

// WorkspaceFolder is a folder the editor has open. Path is empty for
// non-file URIs.
type WorkspaceFolder struct {
	URI  protocol.DocumentURI `json:"uri"`
	Name string               `json:"name"`
	Path string               `json:"-"`
}

// initialFolders takes workspaceFolders, else rootUri, else rootPath.
func initialFolders(p initializeParams) ([]WorkspaceFolder, error) {
	var out []WorkspaceFolder
	for i, f := range p.WorkspaceFolders {
		if f.URI == "" {
			return nil, InvalidParams("params.workspaceFolders[%d].uri is required", i)
		}
		f.Path = textdoc.URIToPath(f.URI)
		out = append(out, f)
	}
	if len(out) > 0 {
		return out, nil
	}
	if p.RootURI != nil && *p.RootURI != "" {
		return []WorkspaceFolder{{URI: *p.RootURI, Name: "root", Path: textdoc.URIToPath(*p.RootURI)}}, nil
	}
	if p.RootPath != nil && *p.RootPath != "" {
		return []WorkspaceFolder{{URI: textdoc.PathToURI(*p.RootPath), Name: "root", Path: *p.RootPath}}, nil
	}
	return nil, nil
}

// WorkspaceFolders returns the editor's workspace folders.
func (s *Server) WorkspaceFolders() []WorkspaceFolder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.folders)
}

func (s *Server) didChangeWorkspaceFolders(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Event struct {
			Added   []WorkspaceFolder `json:"added"`
			Removed []WorkspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, r := range p.Event.Removed {
		s.folders = slices.DeleteFunc(s.folders, func(f WorkspaceFolder) bool { return f.URI == r.URI })
	}
	var added []WorkspaceFolder
	for _, a := range p.Event.Added {
		if a.URI == "" {
			continue
		}
		if !slices.ContainsFunc(s.folders, func(f WorkspaceFolder) bool { return f.URI == a.URI }) {
			a.Path = textdoc.URIToPath(a.URI)
			s.folders = append(s.folders, a)
			added = append(added, a)
		}
	}
	s.mu.Unlock()
	// A folder opened now may hold a change a killed Warden left half done;
	// then it is listed for the change record, as the first folders are.
	s.recoverAdded(added)
	s.primeChanges(added)
	return nil, nil
}

// Config returns the effective configuration: config.toml and environment,
// overlaid with the editor's settings.
func (s *Server) Config() config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// UpdateConfig changes the configuration through fn, which edits a copy. The
// result is validated; on error nothing changes. Watchers are told after.
func (s *Server) UpdateConfig(fn func(*config.Config) error) error {
	s.mu.Lock()
	next := s.cfg
	next.WritableRoots = slices.Clone(next.WritableRoots)
	next.TrustedWorkspaces = slices.Clone(next.TrustedWorkspaces)
	next.Granular = slices.Clone(next.Granular)
	if err := fn(&next); err != nil {
		s.mu.Unlock()
		return err
	}
	if err := next.Validate(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.cfg = next
	watchers := make([]func(config.Config), 0, len(s.cfgWatchers))
	for _, w := range s.cfgWatchers {
		watchers = append(watchers, w)
	}
	s.mu.Unlock()
	for _, w := range watchers {
		w(next)
	}
	return nil
}

// OnConfigChange calls fn with the new configuration after every change.
// fn runs on the goroutine that made the change: keep it quick.
func (s *Server) OnConfigChange(fn func(config.Config)) (stop func()) {
	s.mu.Lock()
	id := s.nextWatcher
	s.nextWatcher++
	s.cfgWatchers[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.cfgWatchers, id)
		s.mu.Unlock()
	}
}

// mergeSettings merges editor settings, shaped like config.Config's JSON,
// either bare or under a "warden" key (as VS Code sends them).
func (s *Server) mergeSettings(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return fmt.Errorf("settings must be a JSON object: %w", err)
	}
	if inner, ok := wrapped["warden"]; ok && len(wrapped) == 1 {
		raw = inner
	}
	// Unknown keys are left out and the rest applies: the update goes
	// through, and the caller says which keys were ignored.
	var unknown *config.UnknownSettingsError
	err := s.UpdateConfig(func(c *config.Config) error {
		err := c.MergeJSON(raw)
		if errors.As(err, &unknown) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if unknown != nil {
		return unknown
	}
	return nil
}

// settingsMessage says how a settings update that failed with err ended:
// ignored whole, or applied without the unknown keys.
func settingsMessage(source string, err error) (protocol.MessageType, string) {
	var unknown *config.UnknownSettingsError
	if errors.As(err, &unknown) {
		return protocol.MessageTypeWarning, fmt.Sprintf("Warden: %s: %v", source, err)
	}
	return protocol.MessageTypeError, fmt.Sprintf("Warden: %s ignored, keeping the previous ones: %v", source, err)
}

func (s *Server) didChangeConfiguration(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := decodeParams(params, &p); err != nil {
		s.client.ShowMessage(protocol.MessageTypeError, fmt.Sprintf("Warden: settings ignored: %v", err))
		return nil, err
	}
	if err := s.mergeSettings(p.Settings); err != nil {
		s.client.ShowMessage(settingsMessage("settings", err))
		var unknown *config.UnknownSettingsError
		if !errors.As(err, &unknown) {
			return nil, err
		}
	}
	s.log.Info("settings changed")
	return nil, nil
}
