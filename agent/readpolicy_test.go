package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/sandbox"
)

const (
	keyText = "PRIVATE-KEY-BYTES"
	awsText = "AWS-SECRET-KEY"
	envText = "DB_PASSWORD=hunter2"
)

// fakeHome is a home directory that is also the workspace (an editor
// opened in ~): an SSH key, AWS credentials, a .env, ordinary files and a
// link in the workspace to the key.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for rel, text := range map[string]string{
		".ssh/id_rsa": keyText, ".ssh/config": "Host *\n", ".aws/credentials": awsText,
		"project/.env": envText, "project/notes.txt": "ordinary notes\n", "project/private/plan.txt": "plans\n",
	} {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "project", "key.txt")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home) // the default gate hides $HOME's stores
	return home
}

// answeringUser answers read dialogs in order and keeps what it was shown.
type answeringUser struct {
	mu      sync.Mutex
	answers []approvals.ReviewDecision
	seen    []approvals.PromptRequest
}

func (u *answeringUser) Prompt(_ context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen = append(u.seen, req)
	if len(u.answers) == 0 {
		return approvals.Denied, context.Canceled // a dismissed dialog
	}
	d := u.answers[0]
	u.answers = u.answers[1:]
	return d, nil
}

// readSession runs the scripted calls through a real session whose reads
// go through an orchestrator with sb and user, and returns what the model
// was told for each call id.
func readSession(t *testing.T, home string, sb approvals.Sandbox, pol approvals.Policy, user approvals.Prompter, calls ...modeltest.Call) map[string]string {
	t.Helper()
	var turns []modeltest.Turn
	for _, c := range calls {
		turns = append(turns, modeltest.Turn{Calls: []modeltest.Call{c}})
	}
	srv := modeltest.New(t, append(turns, modeltest.Turn{Text: "done"})...)
	orch := &Orchestrated{Orchestrator: &approvals.Orchestrator{Policy: pol, Prompter: user}, Sandbox: sb}
	sess, err := NewSession(SessionConfig{
		Model:         testClient(t, srv.URL),
		Env:           ToolEnv{Dir: home, Runner: orch, Reads: orch, Files: DiskFiles{}},
		TranscriptDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Run(context.Background(), "look around"); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				out[m.ToolCallID] = m.Content
			}
		}
	}
	return out
}

func homeSandbox(home string) approvals.Sandbox {
	return approvals.Sandbox{Mode: approvals.WorkspaceWrite, Workspace: []string{home}, Reads: sandbox.ReadPolicy{Home: home}}
}

// TestReadToolsHideWhatTheSandboxHides: with the workspace at $HOME, the
// model's read_file of the SSH key, the AWS credentials and a workspace link
// to the key is refused, naming the setting; list_dir of ~ names the stores
// as hidden without listing them; a .env is asked as high risk (denied,
// then allowed once). Twins: ordinary files read, listings list.
func TestReadToolsHideWhatTheSandboxHides(t *testing.T) {
	home := fakeHome(t)
	user := &answeringUser{answers: []approvals.ReviewDecision{approvals.Denied, approvals.Approved}}
	got := readSession(t, home, homeSandbox(home), approvals.Policy{}, user,
		call("key", "read_file", `{"path":".ssh/id_rsa"}`),
		call("abs", "read_file", `{"path":"`+filepath.Join(home, ".aws", "credentials")+`"}`),
		call("link", "read_file", `{"path":"project/key.txt"}`),
		call("sshdir", "list_dir", `{"path":".ssh"}`),
		call("ls", "list_dir", `{"path":".","depth":3}`),
		call("notes", "read_file", `{"path":"project/notes.txt"}`),
		call("env1", "read_file", `{"path":"project/.env"}`),
		call("env2", "read_file", `{"path":"project/.env","offset":1}`),
	)
	for _, id := range []string{"key", "abs", "link", "sshdir"} {
		if !strings.Contains(got[id], "hidden by the read policy") || !strings.Contains(got[id], "read_allow") {
			t.Errorf("%s: %q", id, got[id])
		}
	}
	for id, text := range got {
		if strings.Contains(text, keyText) || strings.Contains(text, awsText) {
			t.Errorf("%s handed a secret to the model: %q", id, text)
		}
	}
	ls := got["ls"]
	for _, want := range []string{".ssh/ [hidden by the read policy]", ".aws/ [hidden by the read policy]", "notes.txt", "private/", "plan.txt"} {
		if !strings.Contains(ls, want) {
			t.Errorf("list_dir lacks %q:\n%s", want, ls)
		}
	}
	if strings.Contains(ls, "id_rsa") || strings.Contains(ls, "credentials") {
		t.Errorf("list_dir shows inside a hidden store:\n%s", ls)
	}
	if !strings.Contains(got["notes"], "ordinary notes") {
		t.Errorf("twin read_file: %q", got["notes"])
	}
	if strings.Contains(got["env1"], envText) || !strings.Contains(got["env1"], "not approved") {
		t.Errorf("denied .env: %q", got["env1"])
	}
	if !strings.Contains(got["env2"], envText) {
		t.Errorf("allowed .env: %q", got["env2"])
	}
	if len(user.seen) != 2 {
		t.Fatalf("%d dialogs, want 2 (the two .env reads)", len(user.seen))
	}
	d := user.seen[0]
	if acts := d.Actions(); acts[0].Title != approvals.TitleDeny || d.AllowSession || len(d.Amendment) > 0 || d.Risk.Level != risk.High {
		t.Errorf("the dialog is not high risk: %+v", d)
	}
	if msg := d.Message(); !strings.Contains(msg, "read_file") || !strings.Contains(msg, "reads secrets") {
		t.Errorf("dialog:\n%s", msg)
	}
}

// TestReadToolsFollowTheSettings: a read_deny path in an ordinary
// workspace is refused and unlisted; read_access = full lets it and the
// stores through as the sandbox would (a private key still asked, as cat
// would be); under never a secret file is refused unasked; a dismissed
// dialog denies; a session without a gate hides $HOME's stores and asks
// nobody.
func TestReadToolsFollowTheSettings(t *testing.T) {
	home := fakeHome(t)
	ws := filepath.Join(home, "project")
	deny := homeSandbox(home)
	deny.Reads.Deny = []string{filepath.Join(ws, "private")}
	got := readSession(t, home, deny, approvals.Policy{}, &answeringUser{},
		call("plan", "read_file", `{"path":"project/private/plan.txt"}`),
		call("ls", "list_dir", `{"path":"project"}`),
		call("env", "read_file", `{"path":"project/.env"}`), // dismissed
	)
	if !strings.Contains(got["plan"], "hidden by the read policy") {
		t.Errorf("read_deny: %q", got["plan"])
	}
	if !strings.Contains(got["ls"], "private/ [hidden by the read policy]") || strings.Contains(got["ls"], "plan.txt") {
		t.Errorf("read_deny listing:\n%s", got["ls"])
	}
	if strings.Contains(got["env"], envText) {
		t.Errorf("a dismissed dialog let .env through: %q", got["env"])
	}

	full := deny
	full.Reads.Access = sandbox.ReadFull
	user := &answeringUser{answers: []approvals.ReviewDecision{approvals.Approved}}
	got = readSession(t, home, full, approvals.Policy{}, user,
		call("plan", "read_file", `{"path":"project/private/plan.txt"}`),
		call("aws", "read_file", `{"path":".aws/credentials"}`),
		call("ls", "list_dir", `{"path":".ssh"}`),
	)
	if !strings.Contains(got["plan"], "plans") || !strings.Contains(got["aws"], awsText) || !strings.Contains(got["ls"], "id_rsa") {
		t.Errorf("read_access = full: %q", got)
	}
	if len(user.seen) != 1 || !strings.Contains(user.seen[0].Message(), ".aws/credentials") {
		t.Errorf("full: the credentials read was not asked: %d dialogs", len(user.seen))
	}

	never := &answeringUser{answers: []approvals.ReviewDecision{approvals.Approved}}
	got = readSession(t, home, homeSandbox(home), approvals.Policy{Ask: approvals.Never}, never,
		call("env", "read_file", `{"path":"project/.env"}`))
	if strings.Contains(got["env"], envText) || !strings.Contains(got["env"], "never") || len(never.seen) != 0 {
		t.Errorf("never: %q after %d dialogs", got["env"], len(never.seen))
	}

	// No gate: the default policy under $HOME, nobody to ask.
	reg := NewRegistry(&ToolEnv{Dir: home})
	for path, want := range map[string]string{".ssh/id_rsa": "hidden by the read policy", "project/.env": "nobody can be asked", "project/notes.txt": "ordinary notes"} {
		if got := reg.Call(context.Background(), "read_file", `{"path":"`+path+`"}`).Content; !strings.Contains(got, want) {
			t.Errorf("no gate, %s: %q", path, got)
		}
	}
}

// TestForwardedEditorText: text of a hidden file is never sent with a
// request; a .env's is asked; an ordinary file's passes.
func TestForwardedEditorText(t *testing.T) {
	home := fakeHome(t)
	user := &answeringUser{answers: []approvals.ReviewDecision{approvals.Denied}}
	orch := &Orchestrated{Orchestrator: &approvals.Orchestrator{Prompter: user}, Sandbox: homeSandbox(home)}
	env := &ToolEnv{Dir: home, Reads: orch}
	ctx := context.Background()
	if err := env.CheckForward(ctx, filepath.Join(home, ".ssh", "id_rsa")); err == nil || !strings.Contains(err.Error(), "hidden by the read policy") {
		t.Errorf("hidden: %v", err)
	}
	if err := env.CheckForward(ctx, filepath.Join(home, ".ssh", "unsaved-buffer")); err == nil {
		t.Error("a buffer not on disk inside ~/.ssh passed")
	}
	if err := env.CheckForward(ctx, filepath.Join(home, "project", ".env")); err == nil || len(user.seen) != 1 {
		t.Errorf(".env: %v after %d dialogs", err, len(user.seen))
	}
	if err := env.CheckForward(ctx, filepath.Join(home, "project", "notes.txt")); err != nil {
		t.Errorf("twin: %v", err)
	}
}

// TestPatchesStayOutOfHiddenPaths: a patch to the hidden key (whose failed
// match would quote a line of it) or adding ~/.ssh/authorized_keys is
// refused before the file is read; a patch to an ordinary file lands.
func TestPatchesStayOutOfHiddenPaths(t *testing.T) {
	home := fakeHome(t)
	sb := homeSandbox(home)
	pp := &PatchPath{Workspace: patch.Disk{}, Orchestrator: &approvals.Orchestrator{Prompter: &answeringUser{}}, Sandbox: sb}
	reg := NewRegistry(&ToolEnv{Dir: home, Patcher: pp})
	ctx := context.Background()
	for name, input := range map[string]string{
		"update": "*** Begin Patch\n*** Update File: .ssh/id_rsa\n@@\n-WRONG-GUESS\n+x\n*** End Patch\n",
		"add":    "*** Begin Patch\n*** Add File: .ssh/authorized_keys\n+ssh-ed25519 AAAA attacker\n*** End Patch\n",
		"move":   "*** Begin Patch\n*** Update File: project/notes.txt\n*** Move to: .aws/notes.txt\n@@\n-ordinary notes\n+moved\n*** End Patch\n",
	} {
		got := reg.Call(ctx, "apply_patch", `{"input":`+strconvQuote(input)+`}`)
		if got.Verdict != Forbidden || !strings.Contains(got.Content, "hidden by the read policy") || strings.Contains(got.Content, keyText) {
			t.Errorf("%s: %s %q", name, got.Verdict, got.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Error("authorized_keys was written")
	}
	got := reg.Call(ctx, "apply_patch", `{"input":`+strconvQuote("*** Begin Patch\n*** Update File: project/notes.txt\n@@\n-ordinary notes\n+better notes\n*** End Patch\n")+`}`)
	if data, _ := os.ReadFile(filepath.Join(home, "project", "notes.txt")); string(data) != "better notes\n" {
		t.Errorf("twin: %s %q; notes.txt = %q", got.Verdict, got.Content, data)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
