package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Sandboxed git writes its repository's data, never what git executes or
// obeys: add, commit, branch, checkout, stash and merge run unasked under
// on-request; writing the config or a hook, creating a hook, commondir or
// config.worktree, or writing ~/.gitconfig fails. Nothing is left behind.
func TestGitDataSandboxedGitWorksItsCodeStaysReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws := t.TempDir()
	// HOME outside every writable root (not under /tmp).
	home, err := os.MkdirTemp(".", ".gitdata-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	home, _ = filepath.Abs(home)
	gitEnv := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(ws, "f"), []byte("x\n"), 0o644)
	before := gitDirEntries(t, filepath.Join(ws, ".git"))
	run := func(script string) (string, int) {
		t.Helper()
		cmd := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--approval", "on-request", "--deny", "--cwd", ws, "--", "sh", "-c", script)
		cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, gitEnv...)
		out, errOut, code := runCmd(t, cmd)
		return out + errOut, code
	}
	for _, s := range []string{
		"git add f && git commit -qm one",
		"git checkout -qb side && echo y >> f && git commit -qam two && git checkout -q -",
		"git branch other",
		"echo z > g && git add g && git stash -q && git stash pop -q && git reset -q g && rm g",
		"git merge -q --no-edit side",
	} {
		if out, code := run(s); code != 0 {
			t.Fatalf("twin %q: exit %d: %s", s, code, out)
		}
	}
	if out, _ := exec.Command("git", "-C", ws, "log", "--oneline").Output(); strings.Count(string(out), "\n") != 2 {
		t.Fatalf("history after the sandboxed commits: %q", out)
	}
	attacks := []struct{ script, path string }{
		{"echo '[core]' >> .git/config; echo '  fsmonitor = touch /tmp/x' >> .git/config", ".git/config"},
		{"echo 'touch /tmp/x' > .git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"echo 'touch /tmp/x' > .git/hooks/post-checkout", ".git/hooks/post-checkout"},
		{"echo /elsewhere > .git/commondir", ".git/commondir"},
		{"printf '[core]\\nfsmonitor = x\\n' > .git/config.worktree", ".git/config.worktree"},
		{"mkdir -p .git/modules/evil", ".git/modules"},
		{"printf '[core]\\nfsmonitor = x\\n' > ~/.gitconfig", filepath.Join(home, ".gitconfig")},
	}
	cfg, _ := os.ReadFile(filepath.Join(ws, ".git/config"))
	for _, a := range attacks {
		run(a.script)
		p := a.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		if p == filepath.Join(ws, ".git/config") {
			if now, _ := os.ReadFile(p); string(now) != string(cfg) {
				t.Errorf("attack %q changed .git/config", a.script)
			}
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("attack %q: %s exists after the run", a.script, a.path)
		}
	}
	// Twin of the hook attacks: the repository's data stays writable.
	if out, code := run("echo data > .git/refs/heads/twin-probe && rm .git/refs/heads/twin-probe"); code != 0 {
		t.Errorf("twin: writing a ref: exit %d: %s", code, out)
	}
	after := gitDirEntries(t, filepath.Join(ws, ".git"))
	for p := range after {
		if strings.HasPrefix(p, "hooks/") || p == "commondir" || p == "config.worktree" || p == "modules" || p == "worktrees" {
			if !before[p] {
				t.Errorf("left in .git after the runs: %s", p)
			}
		}
	}
}

func gitDirEntries(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if rel, _ := filepath.Rel(dir, p); err == nil && rel != "." {
			out[rel] = true
		}
		return nil
	})
	return out
}
