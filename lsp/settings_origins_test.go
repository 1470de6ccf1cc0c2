package lsp_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestSettingsSourcesNameWhereEachValueCameFrom: warden.status says where
// each effective value came from (config.toml, the environment, the
// editor's settings, warden.policy.set), and a model hint names the place
// the value was set: a base URL the editor sent is to be fixed in the
// editor's settings, not in config.toml.
func TestSettingsSourcesNameWhereEachValueCameFrom(t *testing.T) {
	xdg := t.TempDir()
	os.MkdirAll(filepath.Join(xdg, "warden"), 0o700)
	os.WriteFile(filepath.Join(xdg, "warden", "config.toml"), []byte("sandbox_mode = \"read-only\"\n[model]\nname = \"from-file\"\nbase_url = \"http://127.0.0.1:1/v1\"\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/v1"
	l.Close()
	c := lsptest.Start(t, lsptest.Options{Env: []string{"XDG_CONFIG_HOME=" + xdg, "WARDEN_MODEL=", "OPENAI_BASE_URL=", "OPENAI_API_KEY=sk-env"}})
	c.Initialize(map[string]any{"approvalPolicy": "untrusted", "model": map[string]any{"baseURL": refused}})

	want := map[string]config.Origin{
		"sandbox_mode":    config.FromFile,
		"model.name":      config.FromFile,
		"model.base_url":  config.FromEditor,
		"model.api_key":   config.FromEnv("OPENAI_API_KEY"),
		"approval_policy": config.FromEditor,
	}
	sources := c.Status().Sources
	for key, origin := range want {
		if sources[key] != origin {
			t.Errorf("sources[%s] = %q, want %q (all: %v)", key, sources[key], origin, sources)
		}
	}
	if len(sources) != len(want) {
		t.Errorf("sources name settings at their default: %v", sources)
	}

	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "hello"}); err != nil {
		t.Fatal(err)
	}
	msg := progressEnd(t, c, mark)
	if !strings.Contains(msg, "cannot reach the model endpoint "+refused) || !strings.Contains(msg, "model.baseURL in the editor's settings") || strings.Contains(msg, "config.toml") {
		t.Errorf("the hint does not name the editor's settings: %q", msg)
	}

	if _, err := c.ExecuteCommand("warden.policy.set", map[string]any{"sandboxMode": "workspace-write"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Status().Sources["sandbox_mode"]; got != config.FromPolicySet {
		t.Errorf("after warden.policy.set: sandbox_mode from %q", got)
	}
}
