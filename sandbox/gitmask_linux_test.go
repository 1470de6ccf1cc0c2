package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func maskRoots(t *testing.T) (string, func() []Root) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--template=", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return ws, func() []Root {
		roots := []Root{{Path: ws, Protected: []string{filepath.Join(ws, ".git")}}}
		splitGitDirs(roots)
		return roots
	}
}

// Two runs share the placeholder: the first to end leaves it, the last
// removes it; neither touches one the user filled.
func TestGitMaskSharedAndRemovedByTheLast(t *testing.T) {
	ws, layout := maskRoots(t)
	hooks := filepath.Join(ws, ".git", "hooks")
	a := holdGitMasks(layout())
	b := holdGitMasks(layout())
	if len(a) != 1 || len(b) != 1 || a[0].path != hooks || b[0].path != hooks {
		t.Fatalf("placeholders: %v %v", a, b)
	}
	releaseGitMasks(a)
	if _, err := os.Lstat(hooks); err != nil {
		t.Fatalf("the first run to end removed the placeholder the other holds: %v", err)
	}
	releaseGitMasks(b)
	if _, err := os.Lstat(hooks); err == nil {
		t.Fatal("the last run left the placeholder")
	}
	// Twin: the user puts a hook in it during a run.
	c := holdGitMasks(layout())
	if err := os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	releaseGitMasks(c)
	if _, err := os.Lstat(filepath.Join(hooks, "pre-push")); err != nil {
		t.Fatalf("the user's hook went with the placeholder: %v", err)
	}
	if got := holdGitMasks(layout()); len(got) != 0 {
		t.Errorf("the user's hooks/ taken for a placeholder: %v", got)
	}
}
