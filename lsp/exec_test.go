package lsp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// execServer starts the real binary with its own config home, so the test
// can read the rules "Always allow" writes, and the given settings.
func execServer(t *testing.T, settings map[string]any) (c *lsptest.Client, configHome string) {
	t.Helper()
	configHome = t.TempDir()
	c = lsptest.Start(t, lsptest.Options{Env: []string{"XDG_CONFIG_HOME=" + configHome}})
	c.Initialize(settings)
	return c, configHome
}

// runExec runs warden.exec and returns the summary message it ends with.
func runExec(t *testing.T, c *lsptest.Client, args map[string]any) string {
	t.Helper()
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.exec", args); err != nil {
		t.Fatalf("warden.exec %v: %v", args, err)
	}
	m := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: `"))
	var p protocol.ShowMessageParams
	m.Decode(&p)
	return p.Message
}

func dialogs(c *lsptest.Client, mark int) []protocol.ShowMessageRequestParams {
	var out []protocol.ShowMessageRequestParams
	for _, m := range c.Messages()[mark:] {
		if m.Method == "window/showMessageRequest" {
			var p protocol.ShowMessageRequestParams
			m.Decode(&p)
			out = append(out, p)
		}
	}
	return out
}

func titles(p protocol.ShowMessageRequestParams) []string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, a.Title)
	}
	return out
}

// TestExecApprovalDialogEachAction answers the approval dialog of a
// command with each action, through the real server and the real sandbox,
// and checks what happened.
func TestExecApprovalDialogEachAction(t *testing.T) {
	untrusted := map[string]any{"approvalPolicy": "untrusted"}
	cases := []struct {
		name      string
		answer    lsptest.Handler
		ran       bool
		summary   string
		rule      bool // Always allow wrote a rule
		asksAgain bool // a second identical request shows a dialog
	}{
		{"Allow once", lsptest.Choose("Allow once"), true, "exited 0 (sandboxed)", false, true},
		{"Allow for session", lsptest.Choose("Allow for session"), true, "exited 0 (sandboxed)", false, false},
		{"Always allow", lsptest.Choose("Always allow `touch made`"), true, "exited 0 (sandboxed)", true, false},
		{"Deny", lsptest.Choose("Deny"), false, "did not run: rejected by user", false, true},
		{"Deny and stop", lsptest.Choose("Deny and stop"), false, "did not run: rejected by user (deny and stop)", false, true},
		{"dismissed", lsptest.Dismiss(), false, "dialog was dismissed", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, configHome := execServer(t, untrusted)
			c.OnRequest("window/showMessageRequest", tc.answer)
			mark := c.Mark()
			summary := runExec(t, c, map[string]any{"command": []string{"touch", "made"}, "justification": "the test needs a file"})
			if !strings.Contains(summary, tc.summary) {
				t.Errorf("summary %q lacks %q", summary, tc.summary)
			}
			_, err := os.Stat(filepath.Join(c.Dir, "made"))
			if (err == nil) != tc.ran {
				t.Errorf("file created = %v, want %v", err == nil, tc.ran)
			}
			ds := dialogs(c, mark)
			if len(ds) != 1 {
				t.Fatalf("%d dialogs, want 1", len(ds))
			}
			d := ds[0]
			want := []string{"Allow once", "Allow for session", "Always allow `touch made`", "Deny", "Deny and stop"}
			if strings.Join(titles(d), "|") != strings.Join(want, "|") {
				t.Errorf("actions %q, want %q", titles(d), want)
			}
			for _, s := range []string{"touch made", c.Dir, "the test needs a file", "runs sandboxed", "Risk: low"} {
				if !strings.Contains(d.Message, s) {
					t.Errorf("dialog message lacks %q:\n%s", s, d.Message)
				}
			}
			if d.Type != protocol.MessageTypeInfo {
				t.Errorf("low risk dialog type %v, want Info", d.Type)
			}
			rules, _ := os.ReadFile(filepath.Join(configHome, "warden", "rules", "default.rules"))
			if tc.rule != strings.Contains(string(rules), `prefix_rule(pattern=["touch", "made"], decision="allow")`) {
				t.Errorf("default.rules = %q", rules)
			}
			// The same request again.
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
			mark = c.Mark()
			runExec(t, c, map[string]any{"command": []string{"touch", "made"}})
			if got := len(dialogs(c, mark)) == 1; got != tc.asksAgain {
				t.Errorf("second request showed a dialog = %v, want %v", got, tc.asksAgain)
			}
		})
	}
}

func TestExecHighRiskDialogAndSandboxRetry(t *testing.T) {
	// High risk: an Error dialog without session or always actions.
	c, _ := execServer(t, map[string]any{"approvalPolicy": "on-request"})
	os.MkdirAll(filepath.Join(c.Dir, "build", "obj"), 0o755)
	for _, n := range []string{"a.o", "b.o", "c.o"} {
		os.WriteFile(filepath.Join(c.Dir, "build", "obj", n), []byte("1234"), 0o644)
	}
	// A 2 GiB (sparse) file makes the tree large, so deleting it is high
	// risk (a small rm -rf inside the writable roots runs unasked).
	if err := os.Truncate(filepath.Join(c.Dir, "build", "obj", "a.o"), 2<<30); err != nil {
		t.Fatal(err)
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark := c.Mark()
	summary := runExec(t, c, map[string]any{"command": "rm -rf build"})
	ds := dialogs(c, mark)
	if len(ds) != 1 || ds[0].Type != protocol.MessageTypeError || strings.Join(titles(ds[0]), "|") != "Deny|Allow once|Deny and stop" {
		t.Fatalf("high-risk dialogs %+v", ds)
	}
	if !strings.Contains(ds[0].Message, "deletes 3 files (2.1 GB) under build/") {
		t.Errorf("dialog lacks the deletion fact:\n%s", ds[0].Message)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "build")); err == nil || !strings.Contains(summary, "exited 0") {
		t.Errorf("rm -rf build was approved but build/ remains (summary %q)", summary)
	}

	// A sandbox denial under on-failure asks to retry without the sandbox.
	c, _ = execServer(t, map[string]any{"approvalPolicy": "on-failure", "sandboxMode": "read-only"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark = c.Mark()
	summary = runExec(t, c, map[string]any{"command": []string{"touch", "outside-the-sandbox"}})
	ds = dialogs(c, mark)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "sandbox blocked") || !strings.Contains(ds[0].Message, "NOT sandboxed") {
		t.Fatalf("retry dialogs %+v", ds)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "outside-the-sandbox")); err != nil || !strings.Contains(summary, "without the sandbox") {
		t.Errorf("approved retry did not run unsandboxed: %q %v", summary, err)
	}
	// The output went to the log.
	var logged bool
	for _, m := range c.Messages() {
		if m.Method == "window/logMessage" && strings.Contains(string(m.Params), "[warden.exec]") {
			logged = true
		}
	}
	if !logged {
		t.Error("the command's output did not reach window/logMessage")
	}
}

func TestExecBadArguments(t *testing.T) {
	c, _ := execServer(t, nil)
	for _, args := range []any{
		map[string]any{},
		map[string]any{"command": []string{}},
		map[string]any{"command": ""},
		map[string]any{"command": 7},
		map[string]any{"command": []string{"ls"}, "cwd": "relative"},
		map[string]any{"command": []string{"ls"}, "cwd": "/no/such/dir"},
	} {
		_, err := c.ExecuteCommand("warden.exec", args)
		var rpcErr *lsptest.RPCError
		if b, _ := json.Marshal(args); err == nil || !asRPC(err, &rpcErr) || rpcErr.Code != lsptest.CodeInvalidParams {
			t.Errorf("warden.exec %s: err %v, want InvalidParams", b, err)
		}
	}
}

func asRPC(err error, target **lsptest.RPCError) bool {
	e, ok := err.(*lsptest.RPCError)
	if ok {
		*target = e
	}
	return ok
}

// TestConfigAndRulesReloadOnChange edits config.toml and a rules file under
// a running server: the new policy and rules apply without a restart, and
// broken edits are reported while the last good settings stay.
func TestConfigAndRulesReloadOnChange(t *testing.T) {
	c, configHome := execServer(t, nil)
	dir := filepath.Join(configHome, "warden")
	os.MkdirAll(filepath.Join(dir, "rules"), 0o755)
	if got := c.Status().Policy.ApprovalPolicy; got != "on-request" {
		t.Fatalf("starting policy %q", got)
	}
	waitPolicy := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for c.Status().Policy.ApprovalPolicy != want {
			if time.Now().After(deadline) {
				t.Fatalf("policy is %q, want %q after editing config.toml", c.Status().Policy.ApprovalPolicy, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("approval_policy = \"untrusted\"\n"), 0o644)
	waitPolicy("untrusted")
	mark := c.Mark()
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("approval_policy = \"whenever\"\n"), 0o644)
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("config.toml not reloaded"))
	if got := c.Status().Policy.ApprovalPolicy; got != "untrusted" {
		t.Errorf("a broken config.toml changed the policy to %q", got)
	}

	// Rules: a forbid rule written while the server runs applies to the next command.
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	if s := runExec(t, c, map[string]any{"command": []string{"touch", "f"}}); !strings.Contains(s, "exited 0") {
		t.Fatalf("before the rule: %q", s)
	}
	os.WriteFile(filepath.Join(dir, "rules", "team.rules"), []byte(`prefix_rule(pattern=["touch"], decision="forbidden", justification="no touching")`+"\n"), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := runExec(t, c, map[string]any{"command": []string{"touch", "g"}})
		if strings.Contains(s, "no touching") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new rule never applied: %q", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mark = c.Mark()
	os.WriteFile(filepath.Join(dir, "rules", "team.rules"), []byte(`prefix_rule(pattern=["touch"], decision="nope")`+"\n"), 0o644)
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("team.rules:1"))
	if s := runExec(t, c, map[string]any{"command": []string{"touch", "h"}}); !strings.Contains(s, "no touching") {
		t.Errorf("a broken rules edit dropped the last good rules: %q", s)
	}
}

// Commands run back to back in a git workspace, each asked for as soon as
// the last one's result is in: every one runs, and no placeholder is left
// in .git once the server has reported the last. (Each run's git
// placeholders go after its report; the next run's set-up may have seen
// them and must hold its own.)
func TestExecBackToBackInAGitWorkspace(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	c := lsptest.Start(t, lsptest.Options{Dir: dir})
	c.Initialize(map[string]any{"approvalPolicy": "on-request", "sandboxMode": "workspace-write"})
	for i := range 20 {
		mark := c.Mark()
		if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": []string{"/bin/true"}}); err != nil {
			t.Fatal(err)
		}
		m := c.WaitFrom(mark, "window/showMessage", nil)
		if !strings.Contains(string(m.Params), "exited 0 (sandboxed)") {
			t.Fatalf("run %d: %s", i, m.Params)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, name := range []string{"modules", "worktrees", "commondir", "config.worktree"} {
		for {
			if _, err := os.Lstat(filepath.Join(dir, ".git", name)); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf(".git/%s is still there after the last report", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
