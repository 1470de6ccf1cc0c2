package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// TestShellAdditionalPermissions: the shell tool passes the model's
// additional permissions to the runner as written, tells the model what
// the run got, and rejects malformed requests before anything runs.
func TestShellAdditionalPermissions(t *testing.T) {
	f := newFixture(t,
		modeltest.Turn{Calls: []modeltest.Call{
			call("grant", "shell", `{"command":["pip","install","x"],"sandbox_permissions":"with_additional_permissions","additional_permissions":{"write":["~/.cache/pip"],"read":["data/in.csv"]},"justification":"pip cache"}`),
		}},
		modeltest.Turn{Calls: []modeltest.Call{
			call("missing", "shell", `{"command":["true"],"sandbox_permissions":"with_additional_permissions"}`),
			call("stray", "shell", `{"command":["true"],"additional_permissions":{"write":["/x"]}}`),
			call("unknown", "shell", `{"command":["true"],"sandbox_permissions":"with_additional_permissions","additional_permissions":{"exec":["/x"]}}`),
		}},
		modeltest.Turn{Text: "done"},
	)
	f.runner.results = []CommandResult{{Verdict: Ran, Sandboxed: true, Granted: "write access to ~/.cache/pip, read access to " + f.dir + "/data/in.csv"}}
	if _, err := f.sess.Run(context.Background(), "install"); err != nil {
		t.Fatal(err)
	}
	if len(f.runner.got) != 1 {
		t.Fatalf("runner got %+v", f.runner.got)
	}
	g := f.runner.got[0].Grant
	if !slices.Equal(g.Write, []string{"~/.cache/pip"}) || !slices.Equal(g.Read, []string{"data/in.csv"}) || f.runner.got[0].Escalate {
		t.Errorf("grant passed as %+v", f.runner.got[0])
	}
	if got := f.toolMessage(t, "grant"); !strings.Contains(got, "Sandboxed: yes, with additional write access to ~/.cache/pip") {
		t.Errorf("model told %q", got)
	}
	for id, want := range map[string]string{
		"missing": `needs "additional_permissions"`,
		"stray":   `goes with sandbox_permissions "with_additional_permissions"`,
		"unknown": `unknown field "exec"`,
	} {
		if got := f.toolMessage(t, id); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
			t.Errorf("%s: model got %q, want %q", id, got, want)
		}
	}
}
