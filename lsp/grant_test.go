package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// grantServer starts the real server with a home holding a credential
// store, and returns a directory outside its writable roots (and outside
// /tmp, which workspace-write includes).
func grantServer(t *testing.T, settings map[string]any) (c *lsptest.Client, home, outside string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o755)
	for _, n := range []string{"id_deploy", "id_other"} {
		os.WriteFile(filepath.Join(home, ".ssh", n), []byte("SECRET-"+n+"\n"), 0o600)
	}
	outside, err = os.MkdirTemp("/var/tmp", ".warden-grant-")
	if err != nil {
		t.Skipf("no directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	c = lsptest.Start(t, lsptest.Options{Env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config", "XDG_STATE_HOME=" + home + "/.local/state", "XDG_CACHE_HOME=" + home + "/.cache"}})
	c.Initialize(settings)
	return c, home, outside
}

func logged(c *lsptest.Client, s string) bool {
	for _, m := range c.Messages() {
		if m.Method == "window/logMessage" && strings.Contains(string(m.Params), s) {
			return true
		}
	}
	return false
}

// TestExecGrantDialogAndSession: warden.exec with additional permissions
// shows a dialog naming exactly the grant; Allow for session runs it
// sandboxed with the grant and remembers it for the same or a smaller
// grant; a larger one asks again.
func TestExecGrantDialogAndSession(t *testing.T) {
	c, _, outside := grantServer(t, map[string]any{"approvalPolicy": "on-request"})
	a, b := filepath.Join(outside, "A"), filepath.Join(outside, "B")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	req := func(grant map[string]any, file string) map[string]any {
		return map[string]any{"command": []string{"touch", filepath.Join(a, file)}, "sandbox_permissions": "with_additional_permissions", "additional_permissions": grant}
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow for session"))
	mark := c.Mark()
	summary := runExec(t, c, req(map[string]any{"write": []string{a}}, "one"))
	ds := dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("%d dialogs", len(ds))
	}
	// No "Always allow": the prefix would name a one-off temporary path.
	want := "Allow once|Allow for session|Deny|Deny and stop"
	if strings.Join(titles(ds[0]), "|") != want {
		t.Errorf("titles %q, want %q", titles(ds[0]), want)
	}
	if !strings.Contains(ds[0].Message, "in the sandbox with write access to "+a+"?") || !strings.Contains(ds[0].Message, "grants write access to "+a) {
		t.Errorf("dialog:\n%s", ds[0].Message)
	}
	if !strings.Contains(summary, "exited 0 (sandboxed) with write access to "+a) || !exists(filepath.Join(a, "one")) {
		t.Fatalf("summary %q", summary)
	}
	// Remembered: the same grant, no dialog.
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark = c.Mark()
	runExec(t, c, req(map[string]any{"write": []string{a}}, "one"))
	if n := len(dialogs(c, mark)); n != 0 {
		t.Errorf("the remembered grant asked again (%d dialogs)", n)
	}
	// More: asks again (and is denied).
	mark = c.Mark()
	summary = runExec(t, c, req(map[string]any{"write": []string{a, b}}, "one"))
	if n := len(dialogs(c, mark)); n != 1 || !strings.Contains(summary, "did not run") {
		t.Errorf("a larger grant: %d dialogs, summary %q", n, summary)
	}
}

// TestExecGrantReadOfSecret: a read grant of one secret is high risk (Deny
// first); approved, that file is read and its sibling stays hidden.
func TestExecGrantReadOfSecret(t *testing.T) {
	c, home, _ := grantServer(t, map[string]any{"approvalPolicy": "on-request"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark := c.Mark()
	summary := runExec(t, c, map[string]any{"command": []string{"cat", filepath.Join(home, ".ssh", "id_deploy")},
		"sandbox_permissions": "with_additional_permissions", "additional_permissions": map[string]any{"read": []string{"~/.ssh/id_deploy"}}})
	ds := dialogs(c, mark)
	if len(ds) != 1 || strings.Join(titles(ds[0]), "|") != "Deny|Allow once|Deny and stop" || !strings.Contains(ds[0].Message, "read access to ~/.ssh/id_deploy") {
		t.Fatalf("dialogs %+v", ds)
	}
	if !strings.Contains(summary, "exited 0") || !logged(c, "SECRET-id_deploy") {
		t.Fatalf("granted read: %q", summary)
	}
	summary = runExec(t, c, map[string]any{"command": []string{"cat", filepath.Join(home, ".ssh", "id_other")},
		"sandbox_permissions": "with_additional_permissions", "additional_permissions": map[string]any{"read": []string{"~/.ssh/id_deploy"}}})
	if logged(c, "SECRET-id_other") || strings.Contains(summary, "exited 0") {
		t.Errorf("a grant for id_deploy read id_other: %q", summary)
	}
}

// TestExecRetryWithGrantDialog: after a blocked write and after a hidden
// read, the retry dialog offers the derived grant first and running
// without the sandbox as a separate action; Allow once retries sandboxed.
func TestExecRetryWithGrantDialog(t *testing.T) {
	c, home, outside := grantServer(t, map[string]any{"approvalPolicy": "on-failure"})
	script := func(name, body string) string {
		p := filepath.Join(c.Dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
		return p
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark := c.Mark()
	summary := runExec(t, c, map[string]any{"command": []string{script("build.sh", "touch "+outside+"/built")}})
	ds := dialogs(c, mark)
	if len(ds) != 1 || strings.Join(titles(ds[0]), "|") != "Allow once|Allow for session|Run without sandbox|Deny|Deny and stop" ||
		!strings.Contains(ds[0].Message, "Retry it in the sandbox with write access to "+outside+"?") {
		t.Fatalf("write retry dialogs %+v", ds)
	}
	if !exists(filepath.Join(outside, "built")) || !strings.Contains(summary, "(sandboxed) with write access to "+outside) {
		t.Fatalf("write retry: %q", summary)
	}

	mark = c.Mark()
	summary = runExec(t, c, map[string]any{"command": []string{script("show.sh", "cat "+home+"/.ssh/id_deploy")}})
	ds = dialogs(c, mark)
	if len(ds) != 1 || strings.Join(titles(ds[0]), "|") != "Deny|Allow once|Run without sandbox|Deny and stop" ||
		!strings.Contains(ds[0].Message, "Retry it in the sandbox with read access to ~/.ssh/id_deploy?") {
		t.Fatalf("read retry dialogs %+v", ds)
	}
	if !logged(c, "SECRET-id_deploy") || !strings.Contains(summary, "(sandboxed) with read access to ~/.ssh/id_deploy") {
		t.Fatalf("read retry: %q", summary)
	}
}

// TestExecGrantBadArguments: malformed additional permissions are invalid
// params, before anything is asked.
func TestExecGrantBadArguments(t *testing.T) {
	c, _, _ := grantServer(t, nil)
	for _, args := range []map[string]any{
		{"command": []string{"true"}, "sandbox_permissions": "bogus"},
		{"command": []string{"true"}, "sandbox_permissions": "with_additional_permissions"},
		{"command": []string{"true"}, "additional_permissions": map[string]any{"write": []string{"/x"}}},
	} {
		_, err := c.ExecuteCommand("warden.exec", args)
		var rpc *lsptest.RPCError
		if !asRPC(err, &rpc) || rpc.Code != -32602 {
			t.Errorf("%v: %v, want invalid params", args, err)
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
