package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Windows a sandboxed mode never runs a command unconfined: it is refused,
// saying what to choose, and nothing it would have written exists.
func TestWindowsSandboxedModesRefuse(t *testing.T) {
	ws := t.TempDir()
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
		_, err := Run(context.Background(), Command{
			Argv:   []string{"cmd.exe", "/c", "echo x> made"},
			Cwd:    ws,
			Policy: Policy{Mode: mode, Workspace: []string{ws}},
		})
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("%s: err %v, want a refusal", mode, err)
		}
		if !strings.Contains(err.Error(), "danger-full-access") || !strings.Contains(err.Error(), "untrusted") {
			t.Errorf("%s: the refusal does not say what to choose: %v", mode, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
			t.Fatalf("%s: the refused command ran", mode)
		}
	}
}

// Its twin: danger-full-access runs the command, found through PATHEXT.
func TestWindowsDangerFullAccessRuns(t *testing.T) {
	ws := t.TempDir()
	res, err := Run(context.Background(), Command{
		Argv:   []string{"cmd", "/c", "echo x> made"},
		Cwd:    ws,
		Policy: Policy{Mode: DangerFullAccess, Workspace: []string{ws}},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("danger-full-access: %v, exit %d: %s", err, res.ExitCode, res.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Fatalf("danger-full-access: the command did not run: %v", err)
	}
}
