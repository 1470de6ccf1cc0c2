package approvals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
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
	ctx := risk.Context{Cwd: ws, Sandbox: sb.Policy(), Home: home}
	for _, p := range []string{
		filepath.Join(ws, ".env"), filepath.Join(ws, ".env.production"), filepath.Join(ws, ".env.example"),
		filepath.Join(ws, "deploy", "server.key"), filepath.Join(ws, "id_ed25519"), filepath.Join(ws, "id_ed25519.pub"),
		filepath.Join(ws, "secrets.yaml"), filepath.Join(ws, "main.go"), filepath.Join(ws, "README.md"),
		filepath.Join(home, ".ssh", "config"), filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".bashrc"),
	} {
		cat := risk.Assess(command.Analyze([]string{"cat", p}), ctx)
		r, secret := g.SecretRisk(p, "")
		if secret != cat.ReadsSecrets {
			t.Errorf("%s: read_file secret=%v, cat secret=%v (%s)", p, secret, cat.ReadsSecrets, cat.Summary)
			continue
		}
		if secret && (r.Level != risk.High || len(r.Facts) != 1 || !strings.Contains(strings.Join(cat.Facts, "\n"), r.Facts[0])) {
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
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(want)) {
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

// TestReadDialogSaysWhatHappens: a secret read's dialog names the file
// under ~ and what it is, says that no sandbox is involved because Warden
// reads the file itself (not that something runs unsandboxed), carries the
// risk facts once, and puts Deny first; the audit records a read prompt.
// A path with control characters is shown escaped.
func TestReadDialogSaysWhatHappens(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "project")
	os.MkdirAll(ws, 0o755)
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, Reads: sandbox.ReadPolicy{Home: home}}
	g, err := sb.ReadGuard(ws)
	if err != nil {
		t.Fatal(err)
	}
	for path, heading := range map[string]string{
		filepath.Join(home, ".env"):            "Warden: let the agent read ~/.env (a secret file)?",
		filepath.Join(ws, "deploy", "srv.key"): "Warden: let the agent read ~/project/deploy/srv.key (a secret file)?",
		filepath.Join(ws, "a\x1b[2J", ".env"):  `Warden: let the agent read ~/project/a\x1b[2J/.env (a secret file)?`,
	} {
		risk, ok := g.SecretRisk(path, "")
		if !ok {
			t.Fatalf("%q is no secret", path)
		}
		user := &scriptedUser{answers: []ReviewDecision{Denied}}
		state := t.TempDir()
		audit, err := OpenAuditLog(state)
		if err != nil {
			t.Fatal(err)
		}
		o := &Orchestrator{Prompter: user, Audit: audit}
		if out := o.ApproveRead(context.Background(), ReadRequest{Tool: "read_file", Path: path, Cwd: ws, Sandbox: sb, Risk: risk}); out.Allowed {
			t.Fatalf("denied read allowed: %+v", out)
		}
		audit.Close()
		asked := user.prompts()
		if len(asked) != 1 {
			t.Fatalf("%d prompts", len(asked))
		}
		p := asked[0]
		msg := p.Message()
		lines := strings.Split(msg, "\n")
		if lines[0] != heading {
			t.Errorf("heading %q, want %q", lines[0], heading)
		}
		for _, want := range []string{
			"\nSandbox: not involved: Warden reads this file itself and hands its text to the model\n",
			"\nWarden asks because: read_file would send this file's content to the model\n",
			"\nRisk: high: ",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("dialog lacks %q:\n%s", want, msg)
			}
		}
		for _, wrong := range []string{"NOT sandboxed", "run `", "Warden: run", "\x1b"} {
			if strings.Contains(msg, wrong) {
				t.Errorf("dialog says %q:\n%s", wrong, msg)
			}
		}
		// Said once: in the summary, or as a bullet below a summary that
		// does not say it.
		if strings.Count(strings.ToLower(msg), strings.ToLower(command.EscapeText(risk.Facts[0]))) != 1 {
			t.Errorf("the risk fact is repeated:\n%s", msg)
		}
		if acts := p.Actions(); acts[0].Title != TitleDeny || len(acts) != 3 {
			t.Errorf("actions %+v, want Deny first and nothing to remember", acts)
		}
		log, _ := os.ReadFile(filepath.Join(state, "audit.log"))
		if !strings.Contains(string(log), `"event":"prompt","kind":"read"`) {
			t.Errorf("audit has no read prompt:\n%s", log)
		}
	}
	// Read prompts are Deny first even if a caller's risk were lower.
	low := PromptRequest{Kind: PromptRead, Files: []string{"x"}, Risk: risk.Risk{Level: risk.Low}}
	if low.Actions()[0].Title != TitleDeny {
		t.Errorf("a low-risk read dialog offers %+v", low.Actions())
	}
}
