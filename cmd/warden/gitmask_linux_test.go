package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitMaskRepo makes a repository without hooks/ and config.worktree (git
// init --template=) and returns a runner of sandboxed scripts in it.
func gitMaskRepo(t *testing.T) (ws string, run func(script string) (string, int), start func(script string) func() (string, int)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws = t.TempDir()
	home, err := os.MkdirTemp(".", ".gitmask-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	home, _ = filepath.Abs(home)
	if out, err := exec.Command("git", "init", "-q", "--template=", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, n := range []string{"hooks", "config.worktree", "info"} {
		if _, err := os.Lstat(filepath.Join(ws, ".git", n)); err == nil {
			t.Fatalf("fixture: .git/%s exists", n)
		}
	}
	os.WriteFile(filepath.Join(ws, "f"), []byte("x\n"), 0o644)
	cmdFor := func(script string) *exec.Cmd {
		cmd := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--", "sh", "-c", script)
		cmd.Env = []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=" + os.Getenv("PATH"),
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
		return cmd
	}
	run = func(script string) (string, int) {
		t.Helper()
		out, errOut, code := runCmd(t, cmdFor(script))
		return out + errOut, code
	}
	start = func(script string) func() (string, int) {
		done := make(chan struct{})
		var out string
		var code int
		go func() {
			defer close(done)
			o, e, c := runCmd(t, cmdFor(script))
			out, code = o+e, c
		}()
		return func() (string, int) { <-done; return out, code }
	}
	return ws, run, start
}

// A git dir without hooks/ or config.worktree (which git reads here, by
// extensions.worktreeConfig): the command cannot create a hook or a
// config.worktree at all (not made and moved away: nothing is
// reported removed), git add/commit/checkout/stash/merge still exit 0, and
// nothing is left in .git after the runs.
func TestGitMaskMissingHooksCannotBeCreated(t *testing.T) {
	ws, run, _ := gitMaskRepo(t)
	before := gitDirEntries(t, filepath.Join(ws, ".git"))
	attacks := []struct{ script, path string }{
		{"mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/x\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout", ".git/hooks/post-checkout"},
		{"echo 'touch /tmp/x' > .git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"rmdir .git/hooks; mv .git/hooks .git/h2; mkdir .git/h3 && echo x > .git/h3/post-checkout && mv -T .git/h3 .git/hooks", ".git/hooks/post-checkout"},
		{"printf '[core]\\nfsmonitor = x\\n' > .git/config.worktree", ".git/config.worktree"},
		{"rm -f .git/config.worktree; ln -s /tmp/x .git/config.worktree", ".git/config.worktree"},
	}
	// git reads config.worktree in this repository.
	if out, err := exec.Command("git", "-C", ws, "config", "extensions.worktreeConfig", "true").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	before = gitDirEntries(t, filepath.Join(ws, ".git"))
	for _, a := range attacks {
		out, _ := run(a.script)
		if strings.Contains(out, "the sandbox removed") || strings.Contains(out, "the sandbox could not move away") {
			t.Errorf("attack %q: created and undone, not prevented: %s", a.script, out)
		}
		if _, err := os.Lstat(filepath.Join(ws, a.path)); err == nil {
			t.Errorf("attack %q: %s exists after the run", a.script, a.path)
		}
	}
	os.RemoveAll(filepath.Join(ws, ".git", "h3")) // the attack's own leftovers in a data directory
	// Twins: git itself works with the placeholders in place.
	for _, s := range []string{
		"git add f && git commit -qm one",
		"git checkout -qb side && echo y >> f && git commit -qam two && git checkout -q -",
		"git branch other",
		"echo z > g && git add g && git stash -q && git stash pop -q && git reset -q g && rm g",
		"git merge -q --no-edit side",
		"test -d .git/hooks && test -f .git/config.worktree && test ! -s .git/config.worktree && git status --porcelain",
	} {
		if out, code := run(s); code != 0 {
			t.Fatalf("twin %q: exit %d: %s", s, code, out)
		}
	}
	if out, _ := exec.Command("git", "-C", ws, "log", "--oneline").Output(); strings.Count(string(out), "\n") != 2 {
		t.Fatalf("history after the sandboxed commits: %q", out)
	}
	after := gitDirEntries(t, filepath.Join(ws, ".git"))
	for _, n := range []string{"hooks", "config.worktree"} {
		if after[n] && !before[n] {
			t.Errorf("placeholder .git/%s left after the runs", n)
		}
	}
	// Twin: the user adds hooks on the host afterwards as usual.
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Two runs share a placeholder: the one that ends first does not take it
// away from the one still running, whose command still cannot create the
// hook; the last one removes it.
func TestGitMaskSharedBetweenRuns(t *testing.T) {
	ws, _, start := gitMaskRepo(t)
	first := start("sleep 1")
	time.Sleep(400 * time.Millisecond)
	second := start("sleep 1.5; test -d .git/hooks || echo HOOKS-GONE; echo x > .git/hooks/post-checkout; echo made=$?")
	if out, code := first(); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, out)
	}
	out, _ := second()
	if strings.Contains(out, "HOOKS-GONE") || strings.Contains(out, "made=0") || strings.Contains(out, "the sandbox removed") {
		t.Errorf("second run after the first ended: %s", out)
	}
	if !strings.Contains(out, "made=") {
		t.Errorf("second run did not reach the attack: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks")); err == nil {
		t.Errorf(".git/hooks left after both runs")
	}
}

// Where git does not read config.worktree yet, it gets a placeholder all
// the same: one planted now would come alive when the user turns on
// extensions.worktreeConfig (git sparse-checkout does), so it cannot be made
// at all. Twin: the user turns it on after the run and writes one.
func TestGitMaskWorktreeConfigPlaceholderEvenUnread(t *testing.T) {
	ws, run, _ := gitMaskRepo(t)
	out, _ := run("test -f .git/config.worktree && test ! -s .git/config.worktree && echo PLACEHOLDER; echo '[core]' > .git/config.worktree; echo made=$?")
	if !strings.Contains(out, "PLACEHOLDER") || strings.Contains(out, "made=0") || !strings.Contains(out, "made=") {
		t.Errorf("config.worktree where git does not read it: %s", out)
	}
	if strings.Contains(out, "the sandbox removed") {
		t.Errorf("made and undone, not prevented: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "config.worktree")); err == nil {
		t.Error(".git/config.worktree left")
	}
	for _, args := range [][]string{{"config", "extensions.worktreeConfig", "true"}, {"config", "--worktree", "user.name", "u"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v on the host: %v %s", args, err, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".git", "config.worktree")); err != nil || !strings.Contains(string(b), "name = u") {
		t.Errorf("the user's config.worktree: %q %v", b, err)
	}
}

// The placeholder taken away on the host during a run (which detaches the
// sandbox's mount there): a hook the command then makes is moved away at
// once. Twin: a hook the user adds to the placeholder on the host during a
// run is theirs: kept, and the directory with it.
func TestGitMaskRemovedOnHostStillGuarded(t *testing.T) {
	ws, _, start := gitMaskRepo(t)
	hooks := filepath.Join(ws, ".git", "hooks")
	wait := func() {
		for range 100 {
			if _, err := os.Lstat(hooks); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no placeholder at .git/hooks during the run")
	}
	done := start("sleep 1.2; mkdir -p .git/hooks; echo x > .git/hooks/post-checkout; echo made=$?; sleep 0.3")
	wait()
	time.Sleep(200 * time.Millisecond)
	if err := os.Remove(hooks); err != nil {
		t.Fatalf("remove the placeholder on the host: %v", err)
	}
	out, _ := done()
	if !strings.Contains(out, "made=") || !strings.Contains(out, "the sandbox removed .git/hooks") {
		t.Errorf("hook made after the placeholder went: not moved away: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(hooks, "post-checkout")); err == nil {
		t.Error(".git/hooks/post-checkout left")
	}

	done = start("sleep 1; test -f .git/hooks/pre-push && echo SEEN")
	wait()
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatalf("the user's hook: %v", err)
	}
	out, _ = done()
	if !strings.Contains(out, "SEEN") || strings.Contains(out, "the sandbox removed") {
		t.Errorf("the user's own hook, added during the run: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(hooks, "pre-push")); err != nil {
		t.Errorf("the user's hook is gone after the run: %v", err)
	}
}
