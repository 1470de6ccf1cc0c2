package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// The server reuses the policy it built for the last command (issue 15's
// warm path). A change of settings, workspace folders or rules between two
// commands must decide the second: each stale decision below would run a
// command the new policy stops, and each twin is the command the new
// policy lets run.
func TestExecPolicyFollowsChangesBetweenCommands(t *testing.T) {
	home := t.TempDir()
	configHome := filepath.Join(home, "config")
	bin := filepath.Join(home, "bin") // a startup path: read-only unless it is the workspace
	os.MkdirAll(bin, 0o755)
	c := lsptest.Start(t, lsptest.Options{Env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + configHome}})
	c.Initialize(map[string]any{"approvalPolicy": "on-request", "sandboxMode": "workspace-write"})
	var asked atomic.Int32
	c.OnRequest("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.RPCError) {
		asked.Add(1)
		return map[string]string{"title": "Deny"}, nil
	})
	exec := func(cwd string, argv ...string) string {
		t.Helper()
		mark := c.Mark()
		if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": argv, "cwd": cwd}); err != nil {
			t.Fatalf("warden.exec %v: %v", argv, err)
		}
		m := c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
		return string(m.Params)
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	settings := func(s map[string]any) {
		c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"warden": s}})
		c.Status() // a round trip: the notification is handled
	}
	ws := c.Dir

	// Warm: the policy is built once and reused.
	for _, f := range []string{"a1", "a2"} {
		if s := exec(ws, "touch", f); !strings.Contains(s, "exited 0 (sandboxed)") || asked.Load() != 0 {
			t.Fatalf("touch %s under on-request: %q, %d dialogs", f, s, asked.Load())
		}
	}

	// 1. Settings: untrusted asks (denied here), on-request again runs.
	settings(map[string]any{"approvalPolicy": "untrusted"})
	if s := exec(ws, "touch", "b"); asked.Load() != 1 || exists(filepath.Join(ws, "b")) {
		t.Errorf("after switching to untrusted, touch ran without asking: %q, %d dialogs", s, asked.Load())
	}
	settings(map[string]any{"approvalPolicy": "on-request"})
	if s := exec(ws, "touch", "b2"); !strings.Contains(s, "exited 0") || asked.Load() != 1 {
		t.Errorf("twin: back under on-request: %q, %d dialogs", s, asked.Load())
	}
	settings(map[string]any{"sandboxMode": "read-only"})
	if s := exec(ws, "touch", "c"); exists(filepath.Join(ws, "c")) {
		t.Errorf("after switching to read-only, the workspace was writable: %q", s)
	}
	settings(map[string]any{"sandboxMode": "workspace-write"})
	if s := exec(ws, "touch", "c2"); !strings.Contains(s, "exited 0 (sandboxed)") {
		t.Errorf("twin: back to workspace-write: %q", s)
	}

	// 2. Workspace folders: ~/bin is read-only until the editor opens it.
	before := asked.Load()
	if s := exec(ws, "touch", filepath.Join(bin, "tool")); exists(filepath.Join(bin, "tool")) {
		t.Errorf("~/bin was writable while not a workspace folder: %q", s)
	}
	c.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": c.URI(bin), "name": "bin"}}, "removed": []any{},
	}})
	c.Status()
	asked.Store(before)
	if s := exec(bin, "touch", filepath.Join(bin, "tool2")); !strings.Contains(s, "exited 0 (sandboxed)") || !exists(filepath.Join(bin, "tool2")) {
		t.Errorf("twin: ~/bin opened as a folder is writable: %q", s)
	}
	c.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{}, "removed": []any{map[string]any{"uri": c.URI(bin), "name": "bin"}},
	}})
	c.Status()
	if s := exec(ws, "touch", filepath.Join(bin, "tool3")); exists(filepath.Join(bin, "tool3")) {
		t.Errorf("~/bin stayed writable after its folder was closed: %q", s)
	}

	// 3. Rules: a forbid rule written between two commands applies to the
	// next (the rules are watched; allow the watch its moment).
	os.MkdirAll(filepath.Join(configHome, "warden", "rules"), 0o755)
	os.WriteFile(filepath.Join(configHome, "warden", "rules", "team.rules"), []byte(`prefix_rule(pattern=["touch"], decision="forbidden", justification="no touching")`+"\n"), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(exec(ws, "touch", "d"), "no touching") {
		if time.Now().After(deadline) {
			t.Fatal("the forbid rule never applied")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := exec(ws, "true"); !strings.Contains(s, "exited 0") {
		t.Errorf("twin: a command the rule does not name: %q", s)
	}
}
