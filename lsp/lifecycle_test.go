package lsp_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

func TestMain(m *testing.M) { lsptest.Main(m) }

func rpcCode(t *testing.T, err error) int64 {
	t.Helper()
	var rpcErr *lsptest.RPCError
	if !errors.As(err, &rpcErr) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return rpcErr.Code
}

func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	err := c.Call("textDocument/codeAction", map[string]any{}, nil)
	if code := rpcCode(t, err); code != lsptest.CodeServerNotInitialized {
		t.Fatalf("codeAction before initialize: code %d (%v), want ServerNotInitialized", code, err)
	}
	if !strings.Contains(err.Error(), "initialize") {
		t.Errorf("error %q does not say to initialize first", err)
	}
	res := c.Initialize(nil)
	if res.ServerInfo.Name != "warden" || res.Capabilities.TextDocumentSync.Change != 2 || !res.Capabilities.CodeActionProvider.ResolveProvider {
		t.Errorf("initialize result = %+v", res)
	}
	if !contains(res.Capabilities.ExecuteCommandProvider.Commands, "warden.status") {
		t.Errorf("executeCommandProvider.commands = %v, want warden.status among them", res.Capabilities.ExecuteCommandProvider.Commands)
	}
	if err := c.Call("initialize", map[string]any{"capabilities": map[string]any{}}, nil); rpcCode(t, err) != lsptest.CodeInvalidRequest {
		t.Errorf("second initialize: %v", err)
	}
	if code := c.Shutdown(); code != 0 {
		t.Errorf("exit status after shutdown+exit = %d, want 0", code)
	}
}

func TestExitWithoutShutdownIsStatusOne(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	c.Notify("exit", nil)
	if code := c.WaitExit(); code != 1 {
		t.Errorf("exit without shutdown: status %d, want 1", code)
	}
}

func TestRequestsAfterShutdownAreRefused(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	if err := c.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.ExecuteCommand("warden.status")
	if rpcCode(t, err) != lsptest.CodeInvalidRequest || !strings.Contains(err.Error(), "shutdown") {
		t.Errorf("request after shutdown: %v", err)
	}
	c.Notify("exit", nil)
	if code := c.WaitExit(); code != 0 {
		t.Errorf("status %d", code)
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	err := c.Call("textDocument/hover", map[string]any{}, nil)
	if rpcCode(t, err) != lsptest.CodeMethodNotFound || !strings.Contains(err.Error(), "textDocument/hover") {
		t.Errorf("hover: %v", err)
	}
	// Unknown notifications are ignored and the server keeps serving.
	c.Notify("$/setTrace", map[string]any{"value": "off"})
	c.Status()
}

func TestInvalidParamsNameTheField(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	for name, tc := range map[string]struct {
		method string
		params any
		want   string
	}{
		"wrong type": {"textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": 7}}, "params.textDocument.uri"},
		"missing":    {"textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": "file:///x"}}, "params.range"},
		"no command": {"workspace/executeCommand", map[string]any{"arguments": []any{}}, "params.command"},
		"unknown":    {"workspace/executeCommand", map[string]any{"command": "warden.nope"}, "warden.nope"},
		"status arg": {"workspace/executeCommand", map[string]any{"command": "warden.status", "arguments": []any{1}}, "no arguments"},
		"not object": {"workspace/executeCommand", json.RawMessage(`[1,2]`), "params"},
	} {
		err := c.Call(tc.method, tc.params, nil)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if rpcCode(t, err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want InvalidParams naming %q", name, err, tc.want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// LSP: if the process in initialize's processId dies, the server exits.
func TestServerExitsWhenTheEditorProcessDies(t *testing.T) {
	editor := exec.Command("sleep", "0.3")
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	go editor.Wait()
	c := lsptest.Start(t, lsptest.Options{})
	c.InitializeWith(map[string]any{"processId": editor.Process.Pid, "capabilities": map[string]any{}})
	if code := c.WaitExit(); code != 1 {
		t.Errorf("exit status %d, want 1 (no shutdown)", code)
	}
	c.WaitLog("the editor process is gone")
}
