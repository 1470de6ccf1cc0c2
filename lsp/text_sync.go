package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/lsp/textdoc"
	"go.lsp.dev/protocol"
)

func init() {
	handle("textDocument/didOpen", (*Server).didOpen)
	handle("textDocument/didChange", (*Server).didChange)
	handle("textDocument/didClose", (*Server).didClose)
	handle("textDocument/didSave", func(*Server, context.Context, json.RawMessage) (any, error) { return nil, nil })
}

func (s *Server) didOpen(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument struct {
			URI        protocol.DocumentURI `json:"uri"`
			LanguageID string               `json:"languageId"`
			Version    int32                `json:"version"`
			Text       string               `json:"text"`
		} `json:"textDocument"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	td := p.TextDocument
	if err := required(need("params.textDocument.uri", td.URI == "")); err != nil {
		return nil, err
	}
	s.docs.Open(textdoc.NewDocument(td.URI, td.LanguageID, td.Version, td.Text))
	s.log.Debug("didOpen", "uri", td.URI, "version", td.Version, "bytes", len(td.Text))
	return nil, nil
}

func (s *Server) didChange(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument struct {
			URI     protocol.DocumentURI `json:"uri"`
			Version int32                `json:"version"`
		} `json:"textDocument"`
		ContentChanges []textdoc.ContentChange `json:"contentChanges"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	td := p.TextDocument
	if err := required(need("params.textDocument.uri", td.URI == "")); err != nil {
		return nil, err
	}
	if old, open := s.docs.Version(td.URI); open && td.Version <= old {
		s.log.Warn("didChange version did not increase", "uri", td.URI, "had", old, "got", td.Version)
	}
	if _, err := s.docs.Change(td.URI, td.Version, p.ContentChanges); err != nil {
		if s.docs.IsOpen(td.URI) && !errors.Is(err, textdoc.ErrOutOfSync) {
			// The buffer and Warden's copy now differ: say so once, loudly,
			// since anything the agent does with this file would be wrong.
			s.client.ShowMessage(protocol.MessageTypeError, fmt.Sprintf("Warden: lost track of %s (%v). Close and reopen the file so Warden sees its current text.", td.URI, err))
		}
		return nil, err
	}
	return nil, nil
}

func (s *Server) didClose(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument struct {
			URI protocol.DocumentURI `json:"uri"`
		} `json:"textDocument"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if err := required(need("params.textDocument.uri", p.TextDocument.URI == "")); err != nil {
		return nil, err
	}
	return nil, s.docs.Close(p.TextDocument.URI)
}
