package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A submodule that is registered but not checked out is an empty directory
// a sandboxed command may fill with a repository of its own. git status,
// diff and submodule on the host recurse into it and run its configured
// programs, so such a command must stay in the sandbox.

// submoduleFixture is a clone (without --recurse-submodules) of a
// repository with one submodule, lib: lib is an empty directory.
func submoduleFixture(t *testing.T) (home, ws string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home = t.TempDir()
	id := []string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"}
	hostGit(t, home, "init", "-q", "lib")
	hostGit(t, filepath.Join(home, "lib"), append(id, "commit", "-q", "--allow-empty", "-m", "lib")...)
	hostGit(t, home, "init", "-q", "origin")
	hostGit(t, filepath.Join(home, "origin"), append(id, "submodule", "add", "-q", filepath.Join(home, "lib"), "lib")...)
	hostGit(t, filepath.Join(home, "origin"), append(id, "commit", "-q", "-m", "add lib")...)
	hostGit(t, home, "clone", "-q", "origin", "ws")
	return home, filepath.Join(home, "ws")
}

func TestProtectedSubmoduleNotCheckedOutNeverRunsOnHost(t *testing.T) {
	home, ws := submoduleFixture(t)
	marks := dirOutsideWritableRoots(t)
	rules := filepath.Join(home, "git.rules")
	os.WriteFile(rules, []byte(`prefix_rule(pattern=["git", "status"], decision="allow")
prefix_rule(pattern=["git", "diff"], decision="allow")
prefix_rule(pattern=["git", "submodule"], decision="allow")
`), 0o644)
	env := isolated(home)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(marks, name)); return err == nil }

	// The sandboxed command makes lib a repository whose fsmonitor runs a
	// program (nothing existed there to protect when it started).
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--",
		"sh", "-c", `git init -q lib && git -C lib config core.fsmonitor "touch `+marks+`/sub"`)
	if code != 0 {
		t.Fatalf("setting up lib in the sandbox: exit %d %s", code, errOut)
	}
	// The new repository is moved to the quarantine when the command ends:
	// lib is an empty directory again, and git on the host finds nothing
	// of the command's there.
	if _, err := os.Lstat(filepath.Join(ws, "lib", ".git")); err == nil || !strings.Contains(errOut, "the sandbox removed lib/.git it created: protected path; kept at ") {
		t.Fatalf("the sandbox-made lib/.git stayed (%v) or was not reported: %s", err, errOut)
	}
	for _, argv := range [][]string{{"git", "status"}, {"git", "diff"}, {"git", "submodule", "status"}} {
		wardenIn(t, env, append([]string{"exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--"}, argv...)...)
		if exists("sub") {
			t.Fatalf("attack: %v ran the sandbox-made submodule's fsmonitor on the host", argv)
		}
	}

	// Twin: the same submodule checked out by the user (its .git a gitdir
	// file into the protected .git/modules): git status runs unasked, in the
	// sandbox, and works (the fsmonitor leaves no marker outside it).
	os.RemoveAll(filepath.Join(ws, "lib"))
	hostGit(t, ws, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
	hostGit(t, ws, "config", "core.fsmonitor", "touch "+marks+"/top")
	out, _, _ := wardenIn(t, env, "policy", "check", "--json", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if !runsUnaskedInTheSandbox(out) {
		t.Errorf("twin: git status with a checked-out submodule: %s", out)
	}
	stdout, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if code != 0 || !strings.Contains(stdout, "On branch") || exists("top") {
		t.Errorf("twin: git status under the rule: exit %d, marker %v, out %q err %q", code, exists("top"), stdout, errOut)
	}
}

// A config file the repository includes from the work tree (a team's
// shared ../.gitconfig) is held by the sandbox like the git dir's own
// config: the one a sandboxed command makes is moved away before git runs
// on the host. Attack: the command's .gitconfig, with a core.fsmonitor, is
// gone after its run, and git status under an allow rule runs no
// fsmonitor on the host. Twin: the one the user writes stays, and git
// status under the rule runs unasked, in the sandbox.
func TestProtectedSubmoduleIncludedConfigInWorkTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	hostGit(t, home, "init", "-q", "ws")
	// A shared team config kept in the work tree, included by the user.
	hostGit(t, ws, "config", "include.path", "../.gitconfig")
	marks := dirOutsideWritableRoots(t)
	rules := filepath.Join(home, "git.rules")
	os.WriteFile(rules, []byte(`prefix_rule(pattern=["git", "status"], decision="allow")`+"\n"), 0o644)
	env := isolated(home)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(marks, name)); return err == nil }
	fsmonitor := func(mark string) string { return "[core]\n\tfsmonitor = \"touch " + marks + "/" + mark + "\"\n" }

	_, errOut, _ := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--",
		"sh", "-c", `printf '`+strings.ReplaceAll(fsmonitor("inc"), "\n", `\n`)+`' > .gitconfig`)
	if _, err := os.Lstat(filepath.Join(ws, ".gitconfig")); err == nil || !strings.Contains(errOut, "removed .gitconfig it created") {
		t.Fatalf("attack: the included .gitconfig the sandboxed command made was left (%v): %s", err, errOut)
	}
	out, _, _ := wardenIn(t, env, "policy", "check", "--json", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if !runsUnaskedInTheSandbox(out) {
		t.Errorf("git status, whose included config the sandbox holds: %s", out)
	}
	wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if exists("inc") {
		t.Fatal("attack: the included config's fsmonitor ran on the host")
	}
	// Twin: the user's own included config stays; git status works.
	if err := os.WriteFile(filepath.Join(ws, ".gitconfig"), []byte(fsmonitor("user")), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if _, err := os.Stat(filepath.Join(ws, ".gitconfig")); code != 0 || !strings.Contains(stdout, "On branch") || err != nil {
		t.Errorf("twin: git status under the rule with the user's include: exit %d, marker %v, out %q err %q", code, exists("user"), stdout, errOut)
	}
}
