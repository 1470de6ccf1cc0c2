package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// [model.extra] holds a provider's own request fields, nested as the
// provider wants them; a misspelt key elsewhere is still refused.
func TestModelExtraFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`
[model]
name = "qwen/qwen3-coder"
base_url = "https://openrouter.ai/api/v1"
[model.extra]
reasoning_effort = "high"
provider = { order = ["deepinfra"], allow_fallbacks = false }
`), 0o600)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cfg.Model.Extra)
	if string(got) != `{"provider":{"allow_fallbacks":false,"order":["deepinfra"]},"reasoning_effort":"high"}` {
		t.Errorf("extra = %s", got)
	}
	os.WriteFile(path, []byte("[model]\nname = \"m\"\nbase_urll = \"x\"\n[model.extra]\na = 1\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "base_urll") {
		t.Errorf("a misspelt key beside [model.extra]: %v", err)
	}
}
