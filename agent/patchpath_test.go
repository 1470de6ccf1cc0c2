package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
)

// promptRecorder answers every prompt with one decision and keeps what it saw.
type promptRecorder struct {
	answer approvals.ReviewDecision
	seen   []approvals.PromptRequest
}

func (p *promptRecorder) Prompt(_ context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	p.seen = append(p.seen, req)
	return p.answer, nil
}

// A symlink inside the workspace that leads out looks like an ordinary
// workspace file to the policy; the patch model's flag must still make the
// orchestrator ask, and a denial must stop the patch.
func TestApprovePlanAsksAboutFlaggedFiles(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "target.txt")
	os.WriteFile(target, []byte("one\n"), 0o644)
	if err := os.Symlink(target, filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("one\n"), 0o644)
	sb := approvals.Sandbox{Mode: approvals.WorkspaceWrite, WritableRoots: []string{ws}}

	prepare := func(file string) *patch.Plan {
		changes, err := patch.Parse("*** Begin Patch\n*** Update File: " + file + "\n@@\n-one\n+two\n*** End Patch\n")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := patch.Prepare(changes, patch.Disk{}, patch.Options{Root: ws, WritableRoots: []string{ws}})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}

	user := &promptRecorder{answer: approvals.Denied}
	o := &approvals.Orchestrator{Policy: approvals.Policy{Ask: approvals.OnRequest}, Prompter: user, Session: approvals.NewSessionStore()}

	got, err := ApprovePlan(context.Background(), o, sb, prepare("plain.txt"), "")
	if err != nil || !got.Approved || len(user.seen) != 0 {
		t.Fatalf("a plain workspace file: approval %+v, err %v, prompts %d", got, err, len(user.seen))
	}

	got, err = ApprovePlan(context.Background(), o, sb, prepare("link.txt"), "tidy up")
	if err != nil {
		t.Fatal(err)
	}
	if got.Approved || len(user.seen) != 1 {
		t.Fatalf("a file behind a symlink leading out: approval %+v, prompts %d", got, len(user.seen))
	}
	// The model's reason and Warden's concerns travel apart (each labelled).
	if p := user.seen[0]; !strings.Contains(p.Justification, "tidy up") || !strings.Contains(strings.Join(p.Concerns, "; "), "symlink outside the workspace") {
		t.Errorf("the dialog does not say why Warden asks: reason %q, concerns %q", p.Justification, p.Concerns)
	}
}
