package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/lsp/lsptest"
)

// runExecAny runs warden.exec and returns whatever outcome message it ends
// with (runExec only sees summaries that quote the command first).
func runExecAny(t *testing.T, c *lsptest.Client, args map[string]any) string {
	t.Helper()
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.exec", args); err != nil {
		t.Fatalf("warden.exec %v: %v", args, err)
	}
	m := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: "))
	var p protocol.ShowMessageParams
	m.Decode(&p)
	return p.Message
}

// Issue 18, class 1, through `warden serve`: warden.exec's cwd chooses where
// a command runs, never what it may write; trust is exact.

// outsideDir is a directory outside the workspace and every writable root:
// /tmp and $TMPDIR are writable roots, so under the checkout (or /var/tmp
// when the checkout itself is in a temporary directory).
func outsideDir(t *testing.T) string {
	t.Helper()
	parent, _ := os.Getwd()
	for _, tmp := range []string{"/tmp", os.TempDir()} {
		if rel, err := filepath.Rel(tmp, parent); err == nil && !strings.HasPrefix(rel, "..") {
			parent = "/var/tmp"
		}
	}
	dir, err := os.MkdirTemp(parent, ".boundary-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestBoundaryExecCwdOutsideTheWorkspace(t *testing.T) {
	home := outsideDir(t)
	c, _ := execServer(t, nil) // on-request, workspace-write: the defaults
	attack := map[string]any{"command": []string{"sh", "-c", "echo pwned >> .bashrc"}, "cwd": home}

	// Denied: the dialog names the directory, is high risk (an error
	// dialog, never "Allow for session"), and nothing is written.
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark := c.Mark()
	summary := runExecAny(t, c, attack)
	if !strings.Contains(summary, "did not run") || !strings.Contains(summary, "outside the workspace") {
		t.Errorf("summary %q", summary)
	}
	ds := dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("%d dialogs for a cwd outside the workspace, want 1", len(ds))
	}
	if !strings.Contains(ds[0].Message, "runs in "+home+", outside the workspace") || ds[0].Type != protocol.MessageTypeError ||
		slices.Contains(titles(ds[0]), "Allow for session") {
		t.Errorf("dialog %q (type %v): %s", titles(ds[0]), ds[0].Type, ds[0].Message)
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Fatal("a denied command wrote .bashrc")
	}

	// Allowed once: it runs there, but the writable roots stay the
	// workspace's.
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	summary = runExecAny(t, c, attack)
	if !strings.Contains(summary, "the sandbox blocked") {
		t.Errorf("approved: summary %q", summary)
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Fatal("an approved cwd outside the workspace became a writable root")
	}

	// A link inside the workspace pointing out is judged by where it goes.
	link := filepath.Join(c.Dir, "out")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark = c.Mark()
	runExecAny(t, c, map[string]any{"command": []string{"sh", "-c", "echo pwned >> .profile"}, "cwd": link})
	if ds := dialogs(c, mark); len(ds) != 1 || !strings.Contains(ds[0].Message, "runs in "+home+", outside the workspace") {
		t.Errorf("a cwd through a link out was not asked about as %s: %+v", home, ds)
	}
	if _, err := os.Stat(filepath.Join(home, ".profile")); err == nil {
		t.Fatal("a cwd through a link wrote outside the workspace")
	}

	// The twin: a subdirectory of the workspace runs unasked.
	sub := filepath.Join(c.Dir, "sub")
	os.Mkdir(sub, 0o755)
	mark = c.Mark()
	summary = runExecAny(t, c, map[string]any{"command": []string{"sh", "-c", "echo ok > made"}, "cwd": sub})
	if len(dialogs(c, mark)) != 0 || !strings.Contains(summary, "exited 0") {
		t.Errorf("the twin in %s: summary %q, %d dialogs", sub, summary, len(dialogs(c, mark)))
	}
	if data, _ := os.ReadFile(filepath.Join(sub, "made")); string(data) != "ok\n" {
		t.Errorf("the twin wrote %q", data)
	}
}

// Under never, a cwd outside the workspace is refused without a dialog;
// the twin inside runs.
func TestBoundaryExecCwdOutsideUnderNever(t *testing.T) {
	home := outsideDir(t)
	c, _ := execServer(t, map[string]any{"approvalPolicy": "never"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark := c.Mark()
	summary := runExecAny(t, c, map[string]any{"command": []string{"sh", "-c", "echo pwned >> .bashrc"}, "cwd": home})
	if !strings.Contains(summary, "did not run") || !strings.Contains(summary, "outside the workspace") || !strings.Contains(summary, "never") {
		t.Errorf("summary %q", summary)
	}
	if len(dialogs(c, mark)) != 0 {
		t.Error("never showed a dialog")
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Fatal(".bashrc written under never")
	}
	summary = runExecAny(t, c, map[string]any{"command": []string{"sh", "-c", "echo ok > made"}, "cwd": c.Dir})
	if !strings.Contains(summary, "exited 0") {
		t.Errorf("the twin under never: %q", summary)
	}
}

// trusted_workspaces is matched exactly after resolving links: a trusted
// parent does not trust the workspace folder below it (its allow rule is
// ignored, so the command asks); the folder trusted through a link is
// trusted (its allow rule applies, no dialog).
func TestBoundaryLSPTrustIsExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted func(ws string) string
		asks    bool
	}{
		{"parent trusted", filepath.Dir, true},
		{"trusted through a link", func(ws string) string {
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(ws, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			rules := filepath.Join(ws, ".warden", "rules")
			os.MkdirAll(rules, 0o755)
			os.WriteFile(filepath.Join(rules, "ws.rules"), []byte(`prefix_rule(pattern=["touch", "trusted"], decision="allow")`+"\n"), 0o644)
			configHome := t.TempDir()
			os.MkdirAll(filepath.Join(configHome, "warden"), 0o755)
			os.WriteFile(filepath.Join(configHome, "warden", "config.toml"), []byte(fmt.Sprintf("trusted_workspaces = [%q]\n", tc.trusted(ws))), 0o644)
			c := lsptest.Start(t, lsptest.Options{Dir: ws, Env: []string{"XDG_CONFIG_HOME=" + configHome}})
			c.Initialize(map[string]any{"approvalPolicy": "untrusted"})
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
			mark := c.Mark()
			runExecAny(t, c, map[string]any{"command": []string{"touch", "trusted"}})
			if got := len(dialogs(c, mark)) == 1; got != tc.asks {
				t.Errorf("asked = %v, want %v", got, tc.asks)
			}
		})
	}
}

// The agent in the editor: a shell workdir outside the workspace (the model
// sends $HOME) is a dialog naming the directory; denied, nothing is written
// and the model is told why. The twin, a subdirectory, runs unasked.
func TestBoundaryAgentWorkdirOutsideTheWorkspace(t *testing.T) {
	home := outsideDir(t)
	call := func(id, workdir, script string) modeltest.Turn {
		args, _ := json.Marshal(map[string]any{"command": []string{"sh", "-c", script}, "workdir": workdir})
		return modeltest.Turn{Calls: []modeltest.Call{{ID: id, Name: "shell", Args: string(args)}}}
	}
	srv := modeltest.New(t,
		call("home", home, "echo pwned >> .bashrc"),
		call("twin", "sub", "echo ok > made"),
		modeltest.Turn{Text: "done"},
	)
	c, _ := startAgentServer(t, srv, lsptest.FullCapabilities())
	os.Mkdir(filepath.Join(c.Dir, "sub"), 0o755)
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark := c.Mark()
	if _, err := c.ExecuteCommand("warden.agent.run", map[string]any{"instruction": "go"}); err != nil {
		t.Fatal(err)
	}
	progressEnd(t, c, mark)
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Fatal("the agent wrote .bashrc outside the workspace")
	}
	ds := dialogs(c, mark)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "runs in "+home+", outside the workspace") {
		t.Errorf("want one dialog naming %s, got %+v", home, ds)
	}
	if got := toolResult(t, srv, "home"); !strings.Contains(got, "denied") || !strings.Contains(got, "outside the workspace") {
		t.Errorf("the model was not told why: %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(c.Dir, "sub", "made")); string(data) != "ok\n" {
		t.Errorf("the twin wrote %q: %s", data, toolResult(t, srv, "twin"))
	}
}
