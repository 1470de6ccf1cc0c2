package approvals

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Copies of approvals/risk's test helpers, for the tests that judge risk
// through the evaluator.

// riskWorkspace makes a workspace with a build/ tree of known size, a git
// repository whose origin is on github.com, and a fake home.
func riskWorkspace(t testing.TB, buildFiles int) (ws, home string) {
	t.Helper()
	root := t.TempDir()
	ws = filepath.Join(root, "ws")
	home = filepath.Join(root, "home")
	for i := 0; i < buildFiles; i++ {
		dir := filepath.Join(ws, "build", fmt.Sprintf("d%02d", i%50))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.o", i)), make([]byte, 1000), 0o644)
	}
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:wardenhq/warden.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \"mirror\"]\n\turl = https://gitlab.example.org/w.git\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("some notes\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "one.txt"), make([]byte, 2500), 0o644)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("key"), 0o600)
	return ws, home
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
