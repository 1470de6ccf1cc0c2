package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(`
approval_policy = "untrusted"
sandbox_mode = "read-only"
network_access = true
env_keep = ["PGPASSWORD", "aws_*"]
[model]
name = "from-file"
risk_deadline = "500ms"
`), 0o600)
	t.Setenv("WARDEN_MODEL", "from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("OPENAI_API_KEY", "")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ApprovalPolicy != "untrusted" || cfg.SandboxMode != "read-only" || cfg.Network != NetworkOn {
		t.Errorf("file values not loaded: %+v", cfg)
	}
	if strings.Join(cfg.EnvKeep, ",") != "PGPASSWORD,aws_*" {
		t.Errorf("env_keep = %v", cfg.EnvKeep)
	}
	if cfg.Model.Name != "from-env" || cfg.Model.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("environment must override the file: %+v", cfg.Model)
	}
	if cfg.Model.RiskDeadline.D() != 500*time.Millisecond {
		t.Errorf("risk deadline = %v", cfg.Model.RiskDeadline.D())
	}
	if cfg.ApprovalTimeout.D() != 10*time.Minute {
		t.Errorf("default approval timeout lost: %v", cfg.ApprovalTimeout.D())
	}
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	t.Setenv("WARDEN_MODEL", "")
	cfg, err := Load(filepath.Join(t.TempDir(), "absent.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ApprovalPolicy != "on-request" || cfg.SandboxMode != "workspace-write" || cfg.Network != "" {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	for name, body := range map[string]string{
		"unknown key":  "sandbox = 1\n",
		"bad enum":     `approval_policy = "sometimes"` + "\n",
		"syntax":       "approval_policy = \n",
		"bad duration": "approval_timeout = \"soon\"\n",
		"bad env_keep": "env_keep = [\"AWS_[\"]\n",
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(body), 0o600)
		if _, err := Load(path); err == nil {
			t.Errorf("%s: Load accepted %q", name, body)
		} else if name != "bad enum" && name != "bad env_keep" && !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

func TestMergeJSON(t *testing.T) {
	cfg := Default()
	if err := cfg.MergeJSON(json.RawMessage(`{"approvalPolicy":"never","model":{"name":"m"}}`)); err != nil {
		t.Fatal(err)
	}
	if cfg.ApprovalPolicy != "never" || cfg.Model.Name != "m" || cfg.SandboxMode != "workspace-write" {
		t.Errorf("merge = %+v", cfg)
	}
	before := cfg
	if err := cfg.MergeJSON(json.RawMessage(`{"sandboxMode":"wide-open"}`)); err == nil || !strings.Contains(err.Error(), "sandbox_mode") {
		t.Errorf("bad value: err = %v", err)
	}
	if err := cfg.MergeJSON(json.RawMessage(`{"colour":"red"}`)); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("unknown field: err = %v", err)
	}
	if cfg.SandboxMode != before.SandboxMode || cfg.ApprovalPolicy != before.ApprovalPolicy {
		t.Errorf("a rejected merge changed the config: %+v", cfg)
	}
}

func TestDirsFollowXDG(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg/config")
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/someone")
	if got := ConfigDir(); got != "/xdg/config/warden" {
		t.Errorf("ConfigDir = %q", got)
	}
	if got := StateDir(); got != "/home/someone/.local/state/warden" {
		t.Errorf("StateDir with a relative XDG_STATE_HOME = %q (the spec says ignore it)", got)
	}
}

// A typo in config.toml names the file, line and key, applies none of the
// file's keys (never half a configuration), and keeps what the environment
// sets: WARDEN_MODEL and the endpoint still count.
func TestLoadBadFileKeepsEnvironmentAndNamesLine(t *testing.T) {
	t.Setenv("WARDEN_MODEL", "env-model")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "network_access = true\n\n[model]\nnmae = \"x\"\n", `:4: unknown key "model.nmae"`},
		{"unknown top key", "# a comment\nsandbox = \"x\"\n", `:2: unknown key "sandbox"`},
		{"wrong type", "approval_policy = \"never\"\nnetwork_access = \"yes\"\n", `line 2 (last key "network_access")`},
		{"bad enum", "network_access = true\nsandbox_mode = \"wide\"\n", `:2: sandbox_mode "wide"`},
		{"bad nested duration", "[model]\nname = \"file\"\nrisk_deadline = \"soon\"\n", `line 3`},
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(tc.body), 0o600)
		cfg, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to name %s and %s", tc.name, err, path, tc.want)
		}
		if cfg.Model.Name != "env-model" || cfg.Model.BaseURL != "http://127.0.0.1:9/v1" || !cfg.Model.Configured() {
			t.Errorf("%s: the environment's model was dropped: %+v", tc.name, cfg.Model)
		}
		if cfg.Network != "" || cfg.ApprovalPolicy != "on-request" || cfg.SandboxMode != "workspace-write" {
			t.Errorf("%s: half of the bad file was applied: %+v", tc.name, cfg)
		}
	}
	// The twin: the same file without the typo applies every key.
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte("network_access = true\n\n[model]\nname = \"x\"\n"), 0o600)
	cfg, err := Load(path)
	if err != nil || cfg.Network != NetworkOn || cfg.Model.Name != "env-model" {
		t.Errorf("good file: %v, %+v", err, cfg)
	}
}
