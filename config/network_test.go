package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNetworkAccessReadsWordsAndBooleans(t *testing.T) {
	for body, want := range map[string]NetworkAccess{
		`network_access = "ask"`:  NetworkAsk,
		`network_access = "off"`:  NetworkOff,
		`network_access = "on"`:   NetworkOn,
		`network_access = "ON"`:   NetworkOn,
		`network_access = true`:   NetworkOn,
		`network_access = false`:  NetworkOff,
		`network_access = "true"`: NetworkOn,
		``:                        "",
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(body+"\n"), 0o600)
		cfg, err := Load(path)
		if err != nil || cfg.Network != want {
			t.Errorf("%q: network %q, %v; want %q", body, cfg.Network, err, want)
		}
	}
}

func TestNetworkAccessRejectsOtherValuesNamingTheKey(t *testing.T) {
	for _, body := range []string{`network_access = "proxy"`, `network_access = 1`, `network_access = ["on"]`} {
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(body+"\n"), 0o600)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), "network_access") || !strings.Contains(err.Error(), `"off", "ask" or "on"`) {
			t.Errorf("%q: error %v, want one naming network_access and its values", body, err)
		}
	}
}

func TestNetworkAccessEditorSettingTakesBoolOrString(t *testing.T) {
	cfg := Default()
	for raw, want := range map[string]NetworkAccess{
		`{"networkAccess": true}`:  NetworkOn,
		`{"networkAccess": "ask"}`: NetworkAsk,
		`{"networkAccess": false}`: NetworkOff,
		`{"networkAccess": "on"}`:  NetworkOn,
	} {
		if err := cfg.MergeJSON([]byte(raw)); err != nil || cfg.Network != want {
			t.Errorf("%s: network %q, %v; want %q", raw, cfg.Network, err, want)
		}
	}
	before := cfg.Network
	if err := cfg.MergeJSON([]byte(`{"networkAccess": "sometimes"}`)); err == nil || !strings.Contains(err.Error(), `networkAccess "sometimes"`) {
		t.Errorf("bad value accepted or unnamed: %v", err)
	}
	if cfg.Network != before {
		t.Errorf("a rejected setting changed the network to %q", cfg.Network)
	}
}
