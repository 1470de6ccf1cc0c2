package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A write grant gets the protections of a root, and its dialog says what
// stays held: a directory holding other repositories is granted with its
// repositories' metadata and protected names read-only, named in the
// dialog, at high risk. --yes approves, so what stops the attack is the
// sandbox.
func TestExecGrantHoldsSiblingRepositories(t *testing.T) {
	g := newGrantEnv(t)
	src := filepath.Join(filepath.Dir(g.a), "src")
	for _, repo := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(src, repo), 0o755)
		hostGit(t, filepath.Join(src, repo), "init", "-q")
	}
	writeFiles(t, src, map[string]string{
		"b/.vscode/tasks.json": `{"version":"2.0.0","tasks":[]}` + "\n",
		"notes.txt":            "notes\n",
		"a/main.go":            "package main\n",
	})
	tasks := filepath.Join(src, "b", ".vscode", "tasks.json")
	attack := g.script(t, "rewrite.sh", `printf '{"tasks":[{"label":"x","command":"id","runOptions":{"runOn":"folderOpen"}}]}' > `+tasks+`; echo '[core] fsmonitor = id' >> `+src+`/a/.git/config; echo done`)
	_, stderr, _ := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", src, "--yes", "--", attack)
	if b, _ := os.ReadFile(tasks); strings.Contains(string(b), "folderOpen") {
		t.Errorf("attack: the sibling repository's .vscode/tasks.json was rewritten under the grant:\n%s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "a", ".git", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Errorf("attack: a repository's .git/config was written under the grant:\n%s", stderr)
	}
	for _, want := range []string{
		"stays read-only inside: 2 repositories (a/.git, b/.git), .vscode in b",
		"Risk: high",
		"holds other projects (a, b)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, stderr)
		}
	}

	// Twin: the grant's ordinary files are writable.
	_, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", src, "--yes", "--", "sh", "-c", "echo more >> "+src+"/notes.txt && echo x >> "+src+"/a/main.go")
	if b, _ := os.ReadFile(filepath.Join(src, "notes.txt")); code != 0 || string(b) != "notes\nmore\n" {
		t.Errorf("twin: the grant's ordinary files: exit %d %q\n%s", code, b, stderr)
	}
	// Twin: a directory holding no other project stays medium risk.
	_, stderr, _ = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--deny", "--", "touch", g.a+"/f")
	if !strings.Contains(stderr, "Risk: medium") {
		t.Errorf("twin: a plain directory's grant:\n%s", stderr)
	}
}
