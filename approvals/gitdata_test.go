package approvals

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"github.com/wardenhq/warden/approvals/rules"
)

// The sandbox lets a command write a repository's data (refs, objects,
// rebase state) but not what git executes or obeys. The host-side judgment
// of a repository (gitStaysProtected) must trust only the latter: attacks plant behaviour in the data, twins
// use the same repository untouched.
func TestGitDataBypassTrustsOnlyHeldParts(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{".git/objects", ".git/refs/heads", ".git/hooks", ".git/refs/evil/objects", ".git/refs/evil/refs", "sub"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git/refs/evil/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git/refs/evil/config"), []byte("[core]\n\tpager = touch /tmp/pwned\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "sub/.git"), []byte("gitdir: ../.git/refs/evil\n"), 0o644)
	rf := filepath.Join(t.TempDir(), "t.rules")
	os.WriteFile(rf, []byte(`prefix_rule(pattern=["git"], decision="allow")`+"\n"), 0o644)
	ruleSet, err := rules.LoadRuleFiles([]string{rf})
	if err != nil {
		t.Fatal(err)
	}
	ev := &Evaluator{Policy: Policy{Ask: OnRequest}, Rules: ruleSet}
	sb := Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{ws}}
	env := map[string]string{}
	gitfacts.Env = func(k string) string { return env[k] }
	t.Cleanup(func() { gitfacts.Env = os.Getenv })
	check := func(name string, argv []string, bypass bool) {
		t.Helper()
		e := ev.Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: sb})
		// The rule runs every one in the sandbox; whether the repository is
		// judged held (its git commands may be known-safe) still differs.
		if e.Decision != rules.Allow || e.BypassSandbox || gitfacts.StaysProtected(e.Analysis, ws, sb.Policy()) != bypass {
			t.Errorf("%s: %v: decision %s bypass %v protected %v, want allow in the sandbox, protected %v (%s)", name, argv, e.Decision, e.BypassSandbox, gitfacts.StaysProtected(e.Analysis, ws, sb.Policy()), bypass, e.Reason)
		}
	}
	check("twin: the workspace's repository", []string{"git", "status"}, true)
	check("twin: --git-dir=.git", []string{"git", "--git-dir=.git", "log"}, true)
	check("attack: a repository made in .git/refs, by --git-dir", []string{"git", "--git-dir=.git/refs/evil", "log"}, false)
	check("attack: a repository made in .git/refs, found from -C", []string{"git", "-C", ".git/refs/evil", "log"}, false)
	check("attack: a .git file pointing into .git's data", []string{"git", "-C", "sub", "status"}, false)
	env = map[string]string{"GIT_DIR": filepath.Join(ws, ".git/refs/evil")}
	check("attack: GIT_DIR into .git's data", []string{"git", "log"}, false)
	env = map[string]string{}

	// An interrupted rebase whose todo the sandbox wrote: --continue would
	// run its exec line on the host.
	todo := filepath.Join(ws, ".git/rebase-merge/git-rebase-todo")
	os.MkdirAll(filepath.Dir(todo), 0o755)
	os.WriteFile(todo, []byte("exec touch /tmp/pwned\n"), 0o644)
	check("attack: rebase --continue after a sandbox-written todo", []string{"git", "rebase", "--continue"}, false)
	check("attack: any git while the rebase state exists", []string{"git", "status"}, false)
	os.RemoveAll(filepath.Dir(todo))
	seq := filepath.Join(ws, ".git/sequencer/todo")
	os.MkdirAll(filepath.Dir(seq), 0o755)
	os.WriteFile(seq, []byte("exec touch /tmp/pwned\n"), 0o644)
	check("attack: cherry-pick --continue after a sandbox-written sequencer todo", []string{"git", "cherry-pick", "--continue"}, false)
	os.RemoveAll(filepath.Dir(seq))
	check("twin: rebase --continue with no state the sandbox wrote", []string{"git", "rebase", "--continue"}, true)
}

// Config settings that point into the data of .git (writable in the
// sandbox) keep git in the sandbox; pointing at the held parts does not.
func TestGitDataConfigPointingIntoData(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{".git/objects", ".git/hooks", ".git/myhooks"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	j := gitfacts.Judge{Roots: gitfacts.ResolvedRoots([]string{ws})}
	cases := []struct {
		name, config string
		ok           bool
	}{
		{"twin: hooksPath .git/hooks", "[core]\n\thooksPath = .git/hooks\n", true},
		{"attack: hooksPath in .git's data", "[core]\n\thooksPath = .git/myhooks\n", false},
		{"twin: a relative include (held by the sandbox)", "[include]\n\tpath = shared.cfg\n", true},
		{"attack: an absolute include into .git's data", "[include]\n\tpath = " + filepath.Join(ws, ".git/objects/x.cfg") + "\n", false},
	}
	for _, c := range cases {
		os.WriteFile(filepath.Join(ws, ".git/config"), []byte(c.config), 0o644)
		_, ok := j.ConfigProtected(filepath.Join(ws, ".git/config"), ws, 0)
		if ok != c.ok {
			t.Errorf("%s: protected %v, want %v", c.name, ok, c.ok)
		}
	}
}
