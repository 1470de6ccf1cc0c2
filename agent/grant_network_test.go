package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// TestShellNetworkPermissions: a network grant from the model reaches the
// runner as written, and the model is told what the run got.
func TestShellNetworkPermissions(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{
			call("net", "shell", `{"command":["pip","download","six"],"sandbox_permissions":"with_additional_permissions","additional_permissions":{"network":["pypi.org:443"]},"justification":"download"}`),
		}},
		modeltest.Turn{Text: "done"},
	)
	f.runner.results = []CommandResult{{Verdict: Ran, Sandboxed: true, Granted: "network to pypi.org:443"}}
	if _, err := f.sess.Run(context.Background(), "download"); err != nil {
		t.Fatal(err)
	}
	if len(f.runner.got) != 1 || !slices.Equal(f.runner.got[0].Grant.Network, []string{"pypi.org:443"}) || f.runner.got[0].Escalate {
		t.Fatalf("runner got %+v", f.runner.got)
	}
	if got := f.toolMessage(t, "net"); !strings.Contains(got, "Sandboxed: yes, with additional network to pypi.org:443") {
		t.Errorf("model told %q", got)
	}
}
