package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOriginsFollowTheLastWriter: the file's keys come from config.toml,
// the variables from the environment, the editor's keys from the editor; a
// reload of the file takes over only the keys it changed, and a key the
// file drops goes back to its default.
func TestOriginsFollowTheLastWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte("sandbox_mode = \"read-only\"\napproval_policy = \"never\"\n[model]\nname = \"f\"\n"), 0o600)
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "sk-x")
	t.Setenv("WARDEN_MODEL", "")
	first, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := first
	if err := cfg.MergeJSON([]byte(`{"ApprovalPolicy": "untrusted", "model": {"baseURL": "http://h/v1"}}`)); err != nil {
		t.Fatal(err)
	}
	want := Origins{"sandbox_mode": FromFile, "approval_policy": FromEditor, "model.name": FromFile,
		"model.base_url": FromEditor, "model.api_key": FromEnv("OPENAI_API_KEY")}
	checkOrigins(t, "merged", cfg.Origins, want)
	checkOrigins(t, "the loaded copy", first.Origins, Origins{"sandbox_mode": FromFile, "approval_policy": FromFile,
		"model.name": FromFile, "model.api_key": FromEnv("OPENAI_API_KEY")})

	os.WriteFile(path, []byte("approval_policy = \"never\"\n[model]\nname = \"g\"\n"), 0o600)
	next, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyChanged(first, next)
	delete(want, "sandbox_mode")
	checkOrigins(t, "reloaded", cfg.Origins, want)
	if cfg.SandboxMode != "workspace-write" || cfg.ApprovalPolicy != "untrusted" || cfg.Model.Name != "g" {
		t.Errorf("reloaded: %+v", cfg)
	}
	if w := cfg.Origins.Where("model.base_url", "fallback"); w != "model.baseURL in the editor's settings" {
		t.Errorf("Where = %q", w)
	}
	if w := cfg.Origins.Where("sandbox_mode", "fallback"); w != "fallback" {
		t.Errorf("Where for a default = %q", w)
	}
}

func checkOrigins(t *testing.T, what string, got, want Origins) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: origins %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: origins %v, want %v", what, got, want)
			return
		}
	}
}
