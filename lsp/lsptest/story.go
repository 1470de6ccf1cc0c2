package lsptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// FullCapabilities is what a capable client (VS Code) advertises: progress,
// showDocument, document changes with resource operations and annotations,
// code action literals with resolve.
func FullCapabilities() map[string]any {
	return map[string]any{
		"workspace": map[string]any{
			"applyEdit": true,
			"workspaceEdit": map[string]any{
				"documentChanges":         true,
				"resourceOperations":      []string{"create", "rename", "delete"},
				"failureHandling":         "textOnlyTransactional",
				"changeAnnotationSupport": map[string]any{"groupsOnLabel": true},
			},
			"workspaceFolders": true,
			"configuration":    true,
		},
		"textDocument": map[string]any{
			"codeAction": map[string]any{
				"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"", "quickfix", "refactor", "source"}}},
				"dataSupport":              true,
				"resolveSupport":           map[string]any{"properties": []string{"edit"}},
				"honorsChangeAnnotations":  true,
			},
		},
		"window": map[string]any{
			"workDoneProgress": true,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": true}},
			"showDocument":     map[string]any{"support": true},
		},
	}
}

// Neovim07Capabilities is what Neovim 0.7.2 advertises (no documentChanges
// flag, no annotations, no showDocument).
func Neovim07Capabilities() map[string]any {
	return map[string]any{
		"workspace": map[string]any{
			"applyEdit":     true,
			"workspaceEdit": map[string]any{"resourceOperations": []string{"rename", "create", "delete"}},
		},
		"textDocument": map[string]any{
			"codeAction": map[string]any{
				"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"", "quickfix", "refactor", "source"}}},
				"dataSupport":              true,
				"resolveSupport":           map[string]any{"properties": []string{"edit"}},
			},
		},
		"window": map[string]any{
			"workDoneProgress": true,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
		},
	}
}

// EglotCapabilities is what Emacs 28's eglot 1.9 (Debian bookworm)
// announces: applyEdit and documentChanges but no resourceOperations, no
// change annotations, no window.workDoneProgress, no showDocument, no
// action item properties, code action literals without resolve or data.
func EglotCapabilities() map[string]any {
	return map[string]any{
		"workspace": map[string]any{
			"applyEdit":        true,
			"executeCommand":   map[string]any{"dynamicRegistration": false},
			"workspaceEdit":    map[string]any{"documentChanges": true},
			"configuration":    true,
			"workspaceFolders": true,
		},
		"textDocument": map[string]any{
			"codeAction": map[string]any{
				"dynamicRegistration":      false,
				"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"}}},
				"isPreferredSupport":       true,
			},
		},
		"experimental": map[string]any{},
	}
}

// InitializeResult is the part of the initialize answer tests look at.
type InitializeResult struct {
	Capabilities struct {
		TextDocumentSync struct {
			OpenClose bool `json:"openClose"`
			Change    int  `json:"change"`
		} `json:"textDocumentSync"`
		CodeActionProvider struct {
			CodeActionKinds []string `json:"codeActionKinds"`
			ResolveProvider bool     `json:"resolveProvider"`
		} `json:"codeActionProvider"`
		ExecuteCommandProvider struct {
			Commands []string `json:"commands"`
		} `json:"executeCommandProvider"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
}

// Initialize sends initialize (with FullCapabilities, the client's Dir as
// workspace folder, and options as initializationOptions) and initialized.
func (c *Client) Initialize(options any) InitializeResult {
	c.t.Helper()
	return c.InitializeWith(map[string]any{
		"processId":             os.Getpid(),
		"clientInfo":            map[string]string{"name": "lsptest", "version": "1"},
		"rootUri":               textdoc.PathToURI(c.Dir),
		"capabilities":          FullCapabilities(),
		"initializationOptions": options,
		"workspaceFolders":      []map[string]any{{"uri": textdoc.PathToURI(c.Dir), "name": filepath.Base(c.Dir)}},
	})
}

// InitializeWith sends initialize with the given params, then initialized.
func (c *Client) InitializeWith(params any) InitializeResult {
	c.t.Helper()
	var res InitializeResult
	if err := c.Call("initialize", params, &res); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.Notify("initialized", map[string]any{})
	return res
}

// Shutdown sends shutdown and exit and returns the exit status.
func (c *Client) Shutdown() int {
	c.t.Helper()
	if err := c.Call("shutdown", nil, nil); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	c.Notify("exit", nil)
	return c.WaitExit()
}

// URI returns the file: URI of a path relative to the client's Dir (or
// absolute).
func (c *Client) URI(path string) protocol.DocumentURI {
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.Dir, path)
	}
	return textdoc.PathToURI(path)
}

// Open sends didOpen with version 1 and returns the document's URI. path is
// relative to Dir or absolute; the file need not exist on disk.
func (c *Client) Open(path, languageID, text string) protocol.DocumentURI {
	c.t.Helper()
	uri := c.URI(path)
	c.mu.Lock()
	c.versions[string(uri)] = 1
	c.mu.Unlock()
	c.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": languageID, "version": 1, "text": text},
	})
	return uri
}

// Edit is one content change: Range nil replaces the whole text.
type Edit struct {
	Range *protocol.Range `json:"range,omitempty"`
	Text  string          `json:"text"`
}

// Replace is an Edit of the range (l1,c1)-(l2,c2), columns in UTF-16 units.
func Replace(l1, c1, l2, c2 uint32, text string) Edit {
	return Edit{Range: &protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}, Text: text}
}

// Change sends didChange with the next version and returns that version.
func (c *Client) Change(uri protocol.DocumentURI, edits ...Edit) int32 {
	c.t.Helper()
	c.mu.Lock()
	c.versions[string(uri)]++
	v := c.versions[string(uri)]
	c.mu.Unlock()
	c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": edits,
	})
	return v
}

// Close sends didClose.
func (c *Client) Close(uri protocol.DocumentURI) {
	c.t.Helper()
	c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// CodeActions asks for the code actions on a range.
func (c *Client) CodeActions(uri protocol.DocumentURI, rng protocol.Range) []wire.CodeAction {
	c.t.Helper()
	var actions []wire.CodeAction
	err := c.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        rng,
		"context":      map[string]any{"diagnostics": []any{}},
	}, &actions)
	if err != nil {
		c.t.Fatalf("codeAction: %v", err)
	}
	return actions
}

// ExecuteCommand runs a command and returns its immediate answer.
func (c *Client) ExecuteCommand(command string, args ...any) (json.RawMessage, error) {
	c.t.Helper()
	if args == nil {
		args = []any{}
	}
	var res json.RawMessage
	err := c.Call("workspace/executeCommand", map[string]any{"command": command, "arguments": args}, &res)
	return res, err
}

// Status runs warden.status.
func (c *Client) Status() lsp.Status {
	c.t.Helper()
	raw, err := c.ExecuteCommand("warden.status")
	if err != nil {
		c.t.Fatalf("warden.status: %v", err)
	}
	var st lsp.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		c.t.Fatalf("warden.status answer %s: %v", raw, err)
	}
	return st
}

// Choose answers showMessageRequest with the action titled title (failing
// the request if the dialog has no such action).
func Choose(title string) Handler {
	return func(params json.RawMessage) (any, *RPCError) {
		var p protocol.ShowMessageRequestParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &RPCError{Code: CodeInvalidParams, Message: err.Error()}
		}
		for _, a := range p.Actions {
			if a.Title == title {
				return a, nil
			}
		}
		return nil, &RPCError{Code: CodeInvalidParams, Message: "lsptest: the dialog has no action " + title}
	}
}

// Dismiss answers showMessageRequest with null, as a closed dialog does.
func Dismiss() Handler {
	return func(json.RawMessage) (any, *RPCError) { return nil, nil }
}

// Applied answers workspace/applyEdit with applied=ok.
func Applied(ok bool) Handler {
	return func(json.RawMessage) (any, *RPCError) {
		return wire.ApplyWorkspaceEditResult{Applied: ok}, nil
	}
}

// Hold keeps a request pending until release is closed, then answers with
// then. Use it for "the approval dialog is still open".
func Hold(release <-chan struct{}, then Handler) Handler {
	return func(params json.RawMessage) (any, *RPCError) {
		<-release
		return then(params)
	}
}

// Record wraps h, sending every request's params to ch (non-blocking).
func Record(ch chan<- json.RawMessage, h Handler) Handler {
	return func(params json.RawMessage) (any, *RPCError) {
		select {
		case ch <- params:
		default:
		}
		return h(params)
	}
}

// ProgressKind matches $/progress notifications of the given kind (begin,
// report, end).
func ProgressKind(kind string) func(Message) bool {
	return func(m Message) bool {
		var p struct {
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		return json.Unmarshal(m.Params, &p) == nil && p.Value.Kind == kind
	}
}

// MessageContains matches window/showMessage or logMessage whose text
// contains s.
func MessageContains(s string) func(Message) bool {
	return func(m Message) bool {
		var p struct {
			Message string `json:"message"`
		}
		return json.Unmarshal(m.Params, &p) == nil && contains(p.Message, s)
	}
}

func contains(a, b string) bool { return strings.Contains(a, b) }
