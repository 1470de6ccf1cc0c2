package approvals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox"
)

// TestReadGuardSecretRiskIsCatsRisk: the agent's own read of a file is a
// secret read exactly when `cat FILE` is, with the same fact.
func TestReadGuardSecretRiskIsCatsRisk(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, Reads: sandbox.ReadPolicy{Home: home}}
	g, err := sb.ReadGuard(ws)
	if err != nil {
		t.Fatal(err)
	}
	ctx := RiskContext{Cwd: ws, Sandbox: sb, Home: home}
	for _, p := range []string{
		filepath.Join(ws, ".env"), filepath.Join(ws, ".env.production"), filepath.Join(ws, ".env.example"),
		filepath.Join(ws, "deploy", "server.key"), filepath.Join(ws, "id_ed25519"), filepath.Join(ws, "id_ed25519.pub"),
		filepath.Join(ws, "secrets.yaml"), filepath.Join(ws, "main.go"), filepath.Join(ws, "README.md"),
		filepath.Join(home, ".ssh", "config"), filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".bashrc"),
	} {
		cat := AssessRisk(Analyze([]string{"cat", p}), ctx)
		r, secret := g.SecretRisk(p, "")
		if secret != cat.readsSecrets {
			t.Errorf("%s: read_file secret=%v, cat secret=%v (%s)", p, secret, cat.readsSecrets, cat.Summary)
			continue
		}
		if secret && (r.Level != RiskHigh || len(r.Facts) != 1 || !strings.Contains(strings.Join(cat.Facts, "\n"), r.Facts[0])) {
			t.Errorf("%s: read_file risk %s %q, cat's facts %q", p, r.Level, r.Facts, cat.Facts)
		}
	}
	// Where a link leads counts: a harmless name pointing at a .env.
	if _, secret := g.SecretRisk(filepath.Join(ws, "notes.txt"), filepath.Join(ws, ".env")); !secret {
		t.Error("a link to .env was not a secret read")
	}
}

// TestApproveReadAsksLikeAHighRiskCommand: Deny first and nothing to
// remember; Allow once reads; a dismissed dialog and "never" refuse; Deny
// and stop aborts.
func TestApproveReadAsksLikeAHighRiskCommand(t *testing.T) {
	ws := t.TempDir()
	env := filepath.Join(ws, ".env")
	os.WriteFile(env, []byte("TOKEN=x\n"), 0o600)
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}
	g, err := sb.ReadGuard(ws)
	if err != nil {
		t.Fatal(err)
	}
	risk, ok := g.SecretRisk(env, "")
	if !ok {
		t.Fatal(".env is no secret")
	}
	req := ReadRequest{Tool: "read_file", Path: env, Cwd: ws, Sandbox: sb, Risk: risk}

	user := &scriptedUser{answers: []ReviewDecision{Approved, Denied, Abort}}
	o := &Orchestrator{Prompter: user}
	if out := o.ApproveRead(context.Background(), req); !out.Allowed {
		t.Errorf("Allow once: %+v", out)
	}
	if out := o.ApproveRead(context.Background(), req); out.Allowed || out.Abort {
		t.Errorf("Deny: %+v", out)
	}
	if out := o.ApproveRead(context.Background(), req); out.Allowed || !out.Abort {
		t.Errorf("Deny and stop: %+v", out)
	}
	asked := user.prompts()
	if len(asked) != 3 {
		t.Fatalf("%d prompts, want 3 (nothing remembered)", len(asked))
	}
	var titles []string
	for _, a := range asked[0].Actions() {
		titles = append(titles, a.Title)
	}
	if strings.Join(titles, "|") != "Deny|Allow once|Deny and stop" {
		t.Errorf("actions %q", titles)
	}
	msg := asked[0].Message()
	for _, want := range []string{"read_file", env, "Risk: high", "reads secrets"} {
		if !strings.Contains(msg, want) {
			t.Errorf("dialog lacks %q:\n%s", want, msg)
		}
	}

	dismissed := &Orchestrator{Prompter: &scriptedUser{}} // answers with an error
	if out := dismissed.ApproveRead(context.Background(), req); out.Allowed {
		t.Errorf("dismissed dialog allowed: %+v", out)
	}
	never := &Orchestrator{Policy: Policy{Ask: Never}, Prompter: &scriptedUser{answers: []ReviewDecision{Approved}}}
	if out := never.ApproveRead(context.Background(), req); out.Allowed || !strings.Contains(out.Refused, "never") {
		t.Errorf("never: %+v", out)
	}
	if n := len(never.Prompter.(*scriptedUser).prompts()); n != 0 {
		t.Errorf("never asked %d times", n)
	}
}
