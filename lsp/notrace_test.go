package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// warden serve (issue 12, no trace): a configured writable root that does
// not exist is skipped and logged once (twin: the existing one is used and
// not logged); a protected name a command creates is moved away and the
// user is told; the workspace holds nothing else afterwards.
func TestServeSkippedRootLoggedOnceAndQuarantineShown(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "not-made-yet")
	other := t.TempDir()
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(map[string]any{"writableRoots": []string{missing, other}, "approvalPolicy": "never"})
	runExec(t, c, map[string]any{"command": []string{"sh", "-c", "echo ok > " + other + "/f"}})
	summary := runExec(t, c, map[string]any{"command": []string{"sh", "-c", "mkdir .vscode && echo '{}' > .vscode/tasks.json; echo x > notes.txt"}})
	var logged, otherLogged int
	for _, m := range c.Messages() {
		if m.Method == "window/logMessage" && strings.Contains(string(m.Params), "writable root "+missing+" (writable_roots) does not exist: skipped") {
			logged++
		}
		if m.Method == "window/logMessage" && strings.Contains(string(m.Params), "writable root "+other) {
			otherLogged++
		}
	}
	if logged != 1 || otherLogged != 0 {
		t.Errorf("skipped root logged %d times (want 1), the existing one %d (want 0)", logged, otherLogged)
	}
	if b, err := os.ReadFile(filepath.Join(other, "f")); err != nil || string(b) != "ok\n" {
		t.Errorf("twin: the existing configured root was not writable: %q %v (%s)", b, err, summary)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains("the sandbox removed .vscode it created: protected path; kept at "))
	if code := c.Shutdown(); code != 0 {
		t.Errorf("shutdown: exit %d", code)
	}
	entries, _ := os.ReadDir(c.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "notes.txt" {
		t.Errorf("the workspace after shutdown holds %v", names)
	}
}
