package lsp_test

import (
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestStatusNetworkNeverContradicts: warden.status under the default
// network (ask, through Warden's proxy) says "ask" and no
// `networkAccess: false` beside it; with the network on it says both.
func TestStatusNetworkNeverContradicts(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]any
		network  string
		access   any
	}{
		{nil, "ask", nil},
		{map[string]any{"networkAccess": "off"}, "off", nil},
		{map[string]any{"networkAccess": "on"}, "on", true},
	} {
		c := lsptest.Start(t, lsptest.Options{Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
		c.Initialize(tc.settings)
		raw, err := c.ExecuteCommand("warden.status")
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Policy map[string]any }
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if st.Policy["network"] != tc.network || st.Policy["networkAccess"] != tc.access {
			t.Errorf("settings %v: network %v, networkAccess %v; want %s, %v", tc.settings, st.Policy["network"], st.Policy["networkAccess"], tc.network, tc.access)
		}
	}
}
