package lsp_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestUnknownSettingKeyDropsOnlyItself: a misspelt key in the editor's
// settings (model.base_url) is left out and named with the closest valid
// one; every other setting applies, at initialize and on a change. The
// twin: a bad value still keeps the previous settings whole.
func TestUnknownSettingKeyDropsOnlyItself(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{Env: []string{"XDG_CONFIG_HOME=" + t.TempDir(), "WARDEN_MODEL=", "OPENAI_BASE_URL=", "OPENAI_API_KEY="}})
	mark := c.Mark()
	c.Initialize(map[string]any{"approvalPolicy": "never", "model": map[string]any{"name": "qwen-test", "base_url": "http://127.0.0.1:9/v1"}})
	m := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("unknown key"))
	var msg protocol.ShowMessageParams
	m.Decode(&msg)
	if msg.Type != protocol.MessageTypeWarning || !strings.Contains(msg.Message, `unknown key "model.base_url" (did you mean "model.baseURL"?) ignored; the other settings apply`) {
		t.Errorf("initialize: %v %q", msg.Type, msg.Message)
	}
	if st := c.Status(); st.Policy.ApprovalPolicy != "never" || st.Model.Name != "qwen-test" {
		t.Errorf("the other settings were dropped: policy %q model %+v", st.Policy.ApprovalPolicy, st.Model)
	}

	mark = c.Mark()
	c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"warden": map[string]any{"sandboxMode": "read-only", "aprovalPolicy": "untrusted"}}})
	m = c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("unknown key"))
	m.Decode(&msg)
	if !strings.Contains(msg.Message, `"aprovalPolicy" (did you mean "approvalPolicy"?)`) {
		t.Errorf("change: %q", msg.Message)
	}
	if st := c.Status(); st.Policy.SandboxMode != "read-only" || st.Policy.ApprovalPolicy != "never" {
		t.Errorf("after the change: sandbox %q policy %q", st.Policy.SandboxMode, st.Policy.ApprovalPolicy)
	}

	// Twin: a bad value rejects the update whole.
	mark = c.Mark()
	c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"sandboxMode": "workspace-write", "approvalPolicy": "sometimes"}})
	m = c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("ignored, keeping the previous ones"))
	m.Decode(&msg)
	if msg.Type != protocol.MessageTypeError {
		t.Errorf("bad value: %v %q", msg.Type, msg.Message)
	}
	if st := c.Status(); st.Policy.SandboxMode != "read-only" {
		t.Errorf("a rejected update applied in part: sandbox %q", st.Policy.SandboxMode)
	}
}
