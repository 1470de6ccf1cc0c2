package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitRepo makes a repository at ws with git, config lines added with git
// config, and the files given (relative path: content).
func gitRepo(t *testing.T, ws string, config [][2]string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, kv := range config {
		if out, err := exec.Command("git", "-C", ws, "config", "--add", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config %s: %v %s", kv[0], err, out)
		}
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
