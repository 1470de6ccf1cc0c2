package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// networkAccess is a mode (off, ask, on) or, as before, a boolean, in the
// editor's settings and in warden.policy.set.
func TestNetworkAccessSettingTakesModeOrBool(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(map[string]any{"networkAccess": "ask"})
	if p := c.Status().Policy; p.Network != "ask" || p.NetworkAccess {
		t.Errorf("initialized with ask: policy %+v", p)
	}
	for _, v := range []any{"on", false, true, "off"} {
		raw, err := c.ExecuteCommand("warden.policy.set", map[string]any{"networkAccess": v})
		if err != nil {
			t.Fatalf("policy.set %v: %v", v, err)
		}
		var pol lsp.StatusPolicy
		json.Unmarshal(raw, &pol)
		want := map[any]string{"on": "on", true: "on", false: "off", "off": "off"}[v]
		if pol.Network != want || pol.NetworkAccess != (want == "on") {
			t.Errorf("policy.set %v: policy %+v, want network %s", v, pol, want)
		}
	}
	if _, err := c.ExecuteCommand("warden.policy.set", map[string]any{"networkAccess": "sometimes"}); err == nil || !strings.Contains(err.Error(), "network") {
		t.Errorf("a bad network mode: err %v", err)
	}
	if p := c.Status().Policy; p.Network != "off" {
		t.Errorf("a rejected change altered the network: %+v", p)
	}
}
