package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A sandbox run with /tmp as a writable root leaves placeholders such as
// /tmp/.git while it runs; a warden process in a directory below must not
// take /tmp for its project (whose mode-000 .warden would then make every
// rule unreadable to an ordinary user).
func TestWorkspaceRootIgnoresSandboxPlaceholders(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	git := filepath.Join(parent, ".git")
	if err := os.Mkdir(git, 0o000); err != nil {
		t.Fatal(err)
	}
	if got := workspaceRoot(ws); got != ws {
		t.Errorf("a placeholder .git made %s the root, want %s", got, ws)
	}
	// The twin: a real .git above does make the root.
	if err := os.Chmod(git, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := workspaceRoot(ws); got != parent {
		t.Errorf("root %s, want %s above a real .git", got, parent)
	}
}
