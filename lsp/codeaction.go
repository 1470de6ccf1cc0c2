package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
	"go.lsp.dev/protocol"
)

func init() {
	handle("textDocument/codeAction", (*Server).codeAction)
	handle("codeAction/resolve", (*Server).resolveCodeAction)
}

// CodeActionRequest is what a provider is asked about.
type CodeActionRequest struct {
	Doc         *textdoc.Document // snapshot of the open document
	Range       protocol.Range
	Diagnostics []protocol.Diagnostic
	// Only, when not empty, lists the kinds the client wants; the server
	// filters the results, so providers may ignore it.
	Only []protocol.CodeActionKind
}

// CodeActionProvider contributes code actions. Providers run on the goroutine
// that handles editor messages: they must be quick and must not call the
// client. Work that takes time belongs in a command (Command.Start) that the
// action's Command runs, or in Resolve.
type CodeActionProvider struct {
	// Name identifies the provider in resolve data; unique.
	Name string
	// Kinds are the kinds this provider returns (advertised to the client).
	Kinds []protocol.CodeActionKind
	// Actions returns the actions for a request; nil is fine.
	Actions func(ctx context.Context, s *Server, req CodeActionRequest) ([]wire.CodeAction, error)
	// Resolve, optional, fills in an action the client chose (its Edit,
	// usually) from its Data. Same rules as Actions: quick, no client calls.
	Resolve func(ctx context.Context, s *Server, action wire.CodeAction) (wire.CodeAction, error)
}

var (
	providersMu sync.RWMutex
	providers   = map[string]CodeActionProvider{}
)

// RegisterCodeActions adds a provider; call it from init.
func RegisterCodeActions(p CodeActionProvider) {
	if p.Name == "" || p.Actions == nil {
		panic("lsp: a code action provider needs a Name and Actions")
	}
	providersMu.Lock()
	defer providersMu.Unlock()
	if _, dup := providers[p.Name]; dup {
		panic("lsp: code action provider registered twice: " + p.Name)
	}
	providers[p.Name] = p
}

func sortedProviders() []CodeActionProvider {
	providersMu.RLock()
	defer providersMu.RUnlock()
	out := make([]CodeActionProvider, 0, len(providers))
	for _, p := range providers {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func codeActionKinds() []protocol.CodeActionKind {
	seen := map[protocol.CodeActionKind]bool{}
	var kinds []protocol.CodeActionKind
	for _, p := range sortedProviders() {
		for _, k := range p.Kinds {
			if !seen[k] {
				seen[k] = true
				kinds = append(kinds, k)
			}
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	if kinds == nil {
		kinds = []protocol.CodeActionKind{}
	}
	return kinds
}

// resolveData wraps a provider's Data so resolve finds the provider again.
type resolveData struct {
	Provider string          `json:"wardenProvider"`
	Data     json.RawMessage `json:"data,omitempty"`
}

func (s *Server) codeAction(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument struct {
			URI protocol.DocumentURI `json:"uri"`
		} `json:"textDocument"`
		Range   *protocol.Range `json:"range"`
		Context struct {
			Diagnostics []protocol.Diagnostic     `json:"diagnostics"`
			Only        []protocol.CodeActionKind `json:"only"`
		} `json:"context"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if err := required(need("params.textDocument.uri", p.TextDocument.URI == ""), need("params.range", p.Range == nil)); err != nil {
		return nil, err
	}
	doc, err := s.docs.Get(p.TextDocument.URI)
	if err != nil {
		return nil, InvalidParams("params.textDocument.uri: %v", err)
	}
	if _, err := doc.Slice(*p.Range); err != nil {
		return nil, InvalidParams("params.range: %v", err)
	}
	req := CodeActionRequest{Doc: doc, Range: *p.Range, Diagnostics: p.Context.Diagnostics, Only: p.Context.Only}
	actions := []wire.CodeAction{}
	for _, prov := range sortedProviders() {
		got, err := prov.Actions(ctx, s, req)
		if err != nil {
			s.log.Error("code action provider failed", "provider", prov.Name, "err", err)
			continue
		}
		for _, a := range got {
			if !kindWanted(a.Kind, p.Context.Only) {
				continue
			}
			if prov.Resolve != nil {
				data, err := json.Marshal(resolveData{Provider: prov.Name, Data: a.Data})
				if err != nil {
					return nil, fmt.Errorf("code action %q: %w", a.Title, err)
				}
				a.Data = data
			}
			actions = append(actions, a)
		}
	}
	return actions, nil
}

// kindWanted applies context.only: a kind matches itself and its sub-kinds.
func kindWanted(kind protocol.CodeActionKind, only []protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(string(kind), string(o)+".") {
			return true
		}
	}
	return false
}

func (s *Server) resolveCodeAction(ctx context.Context, params json.RawMessage) (any, error) {
	var a wire.CodeAction
	if err := decodeParams(params, &a); err != nil {
		return nil, err
	}
	if len(a.Data) == 0 || string(a.Data) == "null" {
		// Nothing to resolve: an action that only carries a command (the
		// agent's). Neovim asks to resolve every action without an edit when
		// the server has resolveProvider, so answer with the action as is.
		return a, nil
	}
	var rd resolveData
	if json.Unmarshal(a.Data, &rd) != nil || rd.Provider == "" {
		return nil, InvalidParams("params.data: not a code action warden can resolve (its data was changed or dropped)")
	}
	providersMu.RLock()
	prov, ok := providers[rd.Provider]
	providersMu.RUnlock()
	if !ok || prov.Resolve == nil {
		return nil, InvalidParams("params.data: unknown code action provider %q", rd.Provider)
	}
	a.Data = rd.Data
	resolved, err := prov.Resolve(ctx, s, a)
	if err != nil {
		return nil, err
	}
	resolved.Data, _ = json.Marshal(rd)
	return resolved, nil
}
