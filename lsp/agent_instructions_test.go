package lsp_test

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestAgentInstructionsTrueToNetwork: the model's instructions say the
// network the configuration gives (by default each new host asked through
// Warden's proxy) and how to ask for more, never "no network" under ask.
func TestAgentInstructionsTrueToNetwork(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: "Hi."})
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "hello"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: agent: Hi."))
	system := srv.Requests()[0].Messages[0].Content
	for _, want := range []string{"network through Warden's proxy, each new host asked", `"with_additional_permissions"`, `"network": [hosts]`} {
		if !strings.Contains(system, want) {
			t.Errorf("the instructions lack %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "no network") {
		t.Errorf("the instructions say there is no network under network ask:\n%s", system)
	}
}
