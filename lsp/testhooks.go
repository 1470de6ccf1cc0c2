//go:build wardentest

package lsp

// Test instrumentation, compiled only into the binary lsptest.TestBinary
// builds (go build -tags wardentest): commands and a code action provider
// that exercise the job, client and document machinery before the real
// features exist. Never part of bin/warden.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/wire"
	"go.lsp.dev/protocol"
)

func init() {
	RegisterCommand(Command{
		Name:  "warden.test.ask",
		Title: "Test: asking",
		Start: func(s *Server, args []json.RawMessage) (JobFunc, error) {
			var p protocol.ShowMessageRequestParams
			if err := DecodeArg(args, 0, &p); err != nil {
				return nil, err
			}
			if len(p.Actions) == 0 {
				return nil, InvalidParams("arguments[0].actions must not be empty")
			}
			return func(ctx context.Context, job *jobs.Job) (string, error) {
				job.Report("waiting for the user", 0)
				item, err := s.Client().ShowMessageRequest(ctx, &p)
				if err != nil {
					return "", err
				}
				answer := "dismissed"
				if item != nil {
					answer = "chose " + item.Title
				}
				s.Client().ShowMessage(protocol.MessageTypeInfo, "test: "+answer)
				return answer, nil
			}, nil
		},
	})
	RegisterCommand(Command{
		Name:  "warden.test.sleep",
		Title: "Test: sleeping",
		Start: func(s *Server, args []json.RawMessage) (JobFunc, error) {
			var p struct {
				Ms   int  `json:"ms"`
				Fail bool `json:"fail"`
			}
			if err := DecodeArg(args, 0, &p); err != nil {
				return nil, err
			}
			if p.Ms <= 0 {
				return nil, InvalidParams("arguments[0].ms must be positive")
			}
			return func(ctx context.Context, job *jobs.Job) (string, error) {
				job.Report("sleeping", 0)
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(time.Duration(p.Ms) * time.Millisecond):
				}
				if p.Fail {
					return "", fmt.Errorf("asked to fail after %dms", p.Ms)
				}
				return fmt.Sprintf("slept %dms", p.Ms), nil
			}, nil
		},
	})
	RegisterCommand(Command{
		Name:  "warden.test.applyEdit",
		Title: "Test: applying an edit",
		Start: func(s *Server, args []json.RawMessage) (JobFunc, error) {
			var p wire.ApplyWorkspaceEditParams
			if err := DecodeArg(args, 0, &p); err != nil {
				return nil, err
			}
			return func(ctx context.Context, job *jobs.Job) (string, error) {
				res, err := s.Client().ApplyEdit(ctx, &p)
				if err != nil {
					return "", err
				}
				out, _ := json.Marshal(res)
				s.Client().ShowMessage(protocol.MessageTypeInfo, "test: applyEdit "+string(out))
				return string(out), nil
			}, nil
		},
	})
	RegisterCommand(Command{
		Name:  "warden.test.showDocument",
		Title: "Test: showing a document",
		Start: func(s *Server, args []json.RawMessage) (JobFunc, error) {
			var p wire.ShowDocumentParams
			if err := DecodeArg(args, 0, &p); err != nil {
				return nil, err
			}
			return func(ctx context.Context, job *jobs.Job) (string, error) {
				res, err := s.Client().ShowDocument(ctx, &p)
				if err != nil {
					return "", err
				}
				s.Client().ShowMessage(protocol.MessageTypeInfo, fmt.Sprintf("test: showDocument success=%v", res.Success))
				return "", nil
			}, nil
		},
	})
	// A Run command that wrongly calls the client: the call must be
	// refused, not deadlock the server.
	RegisterCommand(Command{
		Name: "warden.test.callFromHandler",
		Run: func(ctx context.Context, s *Server, _ []json.RawMessage) (any, error) {
			_, err := s.Client().ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{Message: "x", Actions: []protocol.MessageActionItem{{Title: "ok"}}})
			return fmt.Sprint(err), nil
		},
	})
	RegisterCodeActions(CodeActionProvider{
		Name:  "test",
		Kinds: []protocol.CodeActionKind{"quickfix", "refactor.rewrite"},
		Actions: func(_ context.Context, s *Server, req CodeActionRequest) ([]wire.CodeAction, error) {
			text, err := req.Doc.Slice(req.Range)
			if err != nil {
				return nil, err
			}
			data, _ := json.Marshal(map[string]any{"uri": req.Doc.URI, "version": req.Doc.Version, "range": req.Range})
			actions := []wire.CodeAction{{
				Title: fmt.Sprintf("Test: upper-case «%s» (v%d)", text, req.Doc.Version),
				Kind:  "refactor.rewrite",
				Data:  data,
			}}
			for _, d := range req.Diagnostics {
				actions = append(actions, wire.CodeAction{Title: "Test: fix " + d.Message, Kind: "quickfix", Diagnostics: []protocol.Diagnostic{d}})
			}
			return actions, nil
		},
		Resolve: func(_ context.Context, s *Server, a wire.CodeAction) (wire.CodeAction, error) {
			var d struct {
				URI     protocol.DocumentURI `json:"uri"`
				Version int32                `json:"version"`
				Range   protocol.Range       `json:"range"`
			}
			if err := json.Unmarshal(a.Data, &d); err != nil {
				return a, InvalidParams("params.data: %v", err)
			}
			doc, err := s.Docs().Get(d.URI)
			if err != nil {
				return a, InvalidParams("params.data.uri: %v", err)
			}
			text, err := doc.Slice(d.Range)
			if err != nil {
				return a, InvalidParams("params.data.range: %v", err)
			}
			v := d.Version
			a.Edit = &wire.WorkspaceEdit{DocumentChanges: []wire.DocumentChange{{TextDocumentEdit: &wire.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: d.URI}, Version: &v},
				Edits:        []wire.AnnotatedTextEdit{{Range: d.Range, NewText: upper(text)}},
			}}}}
			return a, nil
		},
	})
}

func upper(s string) string {
	b := []rune(s)
	for i, r := range b {
		if r >= 'a' && r <= 'z' {
			b[i] = r - 'a' + 'A'
		}
	}
	return string(b)
}
