package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitWorkspace is newGrantEnv's workspace made a git repository, with a
// script that leaves a marker when git runs it.
func gitWorkspace(t *testing.T) (g grantEnv, cfg, marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	g = newGrantEnv(t)
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "dev@example.com"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = g.ws, g.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	marker = filepath.Join(g.home, "ran")
	g.script(t, "fs.sh", "touch "+marker)
	return g, filepath.Join(g.ws, ".git", "config"), marker
}

// TestExecGitConfigRunsProgram: a git config key that runs a program is
// high risk: asked with Deny first and no remembering choice, under never
// run only sandboxed (where .git/config is read-only, so it does not
// land) and refused without a sandbox; a one-shot -c naming a program is
// asked and, denied, never runs it. The twins: a plain setting offers
// Always allow, a read runs under never, and the empty -c core.fsmonitor=
// Warden itself adds runs unasked.
func TestExecGitConfigRunsProgram(t *testing.T) {
	g, cfg, marker := gitWorkspace(t)
	before, _ := os.ReadFile(cfg)
	unchanged := func(what string) {
		t.Helper()
		if after, _ := os.ReadFile(cfg); string(after) != string(before) {
			t.Errorf("%s changed .git/config:\n%s", what, after)
		}
	}
	attack := []string{"git", "config", "core.fsmonitor", "./fs.sh"}
	_, stderr, code := g.warden(t, append([]string{"exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--"}, attack...)...)
	if code != exitRefused || !strings.Contains(stderr, "Risk: high") || !strings.Contains(stderr, "core.fsmonitor") ||
		!strings.Contains(stderr, "Actions: Deny | Allow once | Deny and stop") {
		t.Errorf("on-request: exit %d\n%s", code, stderr)
	}
	unchanged("on-request, denied")
	_, stderr, code = g.warden(t, append([]string{"exec", "--cwd", g.ws, "--approval", "never", "--"}, attack...)...)
	if code == 0 {
		t.Errorf("never, sandboxed: the write succeeded\n%s", stderr)
	}
	unchanged("never, sandboxed")
	_, stderr, code = g.warden(t, append([]string{"exec", "--cwd", g.ws, "--approval", "never", "--sandbox", "danger-full-access", "--"}, attack...)...)
	if code != exitRefused || !strings.Contains(stderr, "approval policy is never") {
		t.Errorf("never, no sandbox: exit %d\n%s", code, stderr)
	}
	unchanged("never, no sandbox")

	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", "git", "-c", "core.fsmonitor=./fs.sh", "status")
	if code != exitRefused || !strings.Contains(stderr, "-c core.fsmonitor=./fs.sh") || exists(marker) {
		t.Errorf("-c core.fsmonitor=./fs.sh: exit %d, ran %v\n%s", code, exists(marker), stderr)
	}

	// Twins.
	_, stderr, _ = g.warden(t, "exec", "--cwd", g.ws, "--approval", "untrusted", "--deny", "--", "git", "config", "user.name", "Dev")
	if !strings.Contains(stderr, "Always allow `git config user.name Dev`") || strings.Contains(stderr, "Risk: high") {
		t.Errorf("plain setting:\n%s", stderr)
	}
	stdout, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "never", "--", "git", "config", "--get", "user.email")
	if code != 0 || strings.TrimSpace(stdout) != "dev@example.com" {
		t.Errorf("read under never: exit %d %q\n%s", code, stdout, stderr)
	}
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", "git", "-c", "core.fsmonitor=", "status", "--short")
	if code != 0 || strings.Contains(stderr, "Actions:") {
		t.Errorf("-c core.fsmonitor= (empty): exit %d\n%s", code, stderr)
	}
}

// TestExecSequenceEditorRebase: an agent's non-interactive rebase, a sed
// that edits git's todo list in place, is judged as the rebase it is
// (medium): under on-request it runs sandboxed without asking (--deny would
// refuse any prompt) and squashes. The attack, a sed whose script also
// writes a file (w), is a program Warden cannot analyse: high risk, asked,
// and denied it changes nothing.
func TestExecSequenceEditorRebase(t *testing.T) {
	g, _, _ := gitWorkspace(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=dev"}, args...)...)
		cmd.Dir, cmd.Env = g.ws, g.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, f := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(g.ws, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", f)
		git("commit", "-qm", "add "+f)
	}
	head := git("rev-parse", "HEAD")
	out := filepath.Join(g.ws, "leak")
	attack := `GIT_SEQUENCE_EDITOR="sed -i 's/^pick/fixup/w ` + out + `'" git -c user.name=dev rebase -i HEAD~2`
	_, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", "sh", "-c", attack)
	if code != exitRefused || !strings.Contains(stderr, "Risk: high") || !strings.Contains(stderr, "GIT_SEQUENCE_EDITOR") {
		t.Errorf("attack: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil || git("rev-parse", "HEAD") != head {
		t.Errorf("the denied rebase ran")
	}

	twin := `GIT_SEQUENCE_EDITOR="sed -i '2s/^pick/fixup/'" git -c user.name=dev rebase -i HEAD~2`
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", "sh", "-c", twin)
	if code != 0 {
		t.Fatalf("twin: exit %d\n%s", code, stderr)
	}
	if log := git("log", "--format=%s"); log != "add b\nadd a\n" {
		t.Errorf("twin: history after the rebase:\n%s", log)
	}
}
