package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// TestReadPolicySettings: the editor's readAccess, readDeny, readAllow and
// readableRoots reach the sandbox policy, ~ expanded; a bad value is
// refused and leaves the settings as they were.
func TestReadPolicySettings(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	cfg := config.Default()
	raw := json.RawMessage(`{"readAccess":"restricted","readDeny":["~/secrets/*.pem"],"readAllow":["~/.aws/config"],"readableRoots":["/srv/data"]}`)
	if err := cfg.MergeJSON(raw); err != nil {
		t.Fatal(err)
	}
	p, err := sandboxPolicy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := sandbox.ReadPolicy{Access: sandbox.ReadRestricted, Deny: []string{filepath.Join(home, "secrets/*.pem"), config.StateDir()},
		Allow: []string{filepath.Join(home, ".aws/config")}, ReadableRoots: []string{"/srv/data"}}
	if p.Reads.Access != want.Access || !slices.Equal(p.Reads.Deny, want.Deny) || !slices.Equal(p.Reads.Allow, want.Allow) || !slices.Equal(p.Reads.ReadableRoots, want.ReadableRoots) {
		t.Errorf("reads %+v, want %+v", p.Reads, want)
	}
	// Warden's config.toml joins the deny list once it holds an API key.
	os.MkdirAll(filepath.Join(home, ".config/warden"), 0o755)
	os.WriteFile(filepath.Join(home, ".config/warden/config.toml"), []byte("[model]\napi_key = \"sk-x\"\n"), 0o600)
	if p, _ := sandboxPolicy(cfg, nil); !slices.Contains(p.Reads.Deny, filepath.Join(home, ".config/warden/config.toml")) {
		t.Errorf("config.toml with a key is not hidden: %v", p.Reads.Deny)
	}
	for _, bad := range []string{`{"readAccess":"everything"}`, `{"readDeny":["relative"]}`} {
		before := cfg
		if err := cfg.MergeJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
		if cfg.ReadAccess != before.ReadAccess || !slices.Equal(cfg.ReadDeny, before.ReadDeny) {
			t.Errorf("%s changed the settings", bad)
		}
	}
}
