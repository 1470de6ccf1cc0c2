package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The command starts only after Command.Ready returns, though the helper
// builds the sandbox meanwhile; a Ready that fails starts nothing and
// refuses the run. Checked cold and on a spare, sandboxed and not.
func TestReadyGatesTheCommandStart(t *testing.T) {
	for _, spare := range []bool{false, true} {
		for _, mode := range []Mode{WorkspaceWrite, DangerFullAccess} {
			name := map[bool]string{false: "cold/", true: "spare/"}[spare] + string(mode)
			t.Run(name, func(t *testing.T) {
				if spare {
					withSpares(t)
				}
				ws := t.TempDir()
				mark := filepath.Join(ws, "ran")
				c := Command{Argv: sh(`echo x > ran`), Policy: Policy{Mode: mode}}
				if spare {
					run(t, ws, c) // starts the spare for the runs below
					os.Remove(mark)
					spares.settle()
				}

				// Twin: a Ready that holds the start a moment, then lets it go.
				var startedEarly bool
				c.Ready = func() error {
					time.Sleep(150 * time.Millisecond)
					_, err := os.Stat(mark)
					startedEarly = err == nil
					return nil
				}
				res := run(t, ws, c)
				if res.ExitCode != 0 || startedEarly {
					t.Fatalf("held run: exit %d, started before Ready returned: %v (%s)", res.ExitCode, startedEarly, res.Stderr)
				}
				if _, err := os.Stat(mark); err != nil {
					t.Fatalf("the command did not run after Ready: %v", err)
				}
				os.Remove(mark)
				spares.settle()

				// Attack on the barrier: Ready fails (the audit log could not
				// record the decision): nothing runs.
				c.Ready = func() error { return errors.New("audit log: disk full") }
				c.Helper, c.Cwd = testHelper, ws
				c.Policy.Workspace = []string{ws}
				_, err := Run(context.Background(), c)
				var refused *RefusedError
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), "disk full") {
					t.Fatalf("Run with a failing Ready: %v, want a refusal naming its error", err)
				}
				time.Sleep(100 * time.Millisecond)
				if _, err := os.Stat(mark); err == nil {
					t.Fatal("the command ran although Ready failed")
				}
			})
		}
	}
}
