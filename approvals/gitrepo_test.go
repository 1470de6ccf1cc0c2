package approvals

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"github.com/wardenhq/warden/approvals/rules"
)

// A repository is judged held (its git commands may be known-safe) only
// when every repository the command could use is one the sandbox protects;
// an allow rule runs each of them in the sandbox either way. Attacks use a
// repository a sandboxed command could have made; twins the workspace's own.
func TestProtectedGitRepositoryDecidesBypass(t *testing.T) {
	ws := t.TempDir()
	// Outside every place a sandbox writes (not under /tmp or $TMPDIR, where
	// a checkout may itself live).
	outside, err := os.MkdirTemp(outsideTempDirs(t), ".gitrepo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	outside, _ = filepath.Abs(outside)
	for _, d := range []string{".git/worktrees/wt", ".git/modules/m", "sub/.git", "bare.git/objects", "bare.git/refs", "m", "wt", "evil/store"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.MkdirAll(filepath.Join(outside, "repo/.git"), 0o755)
	os.WriteFile(filepath.Join(ws, "bare.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "m/.git"), []byte("gitdir: ../.git/modules/m\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "wt/.git"), []byte("gitdir: "+filepath.Join(ws, ".git/worktrees/wt")+"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git/worktrees/wt/commondir"), []byte("../..\n"), 0o644)
	for _, d := range []string{".git/worktrees/wt", ".git/modules/m"} {
		os.WriteFile(filepath.Join(ws, d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(ws, ".git/modules/m/objects"), 0o755)
	os.WriteFile(filepath.Join(ws, "evil/.git"), []byte("gitdir: store\n"), 0o644)
	rf := filepath.Join(t.TempDir(), "t.rules")
	os.WriteFile(rf, []byte(`prefix_rule(pattern=["git"], decision="allow")
prefix_rule(pattern=["cd"], decision="allow")
`), 0o644)
	ruleSet, err := rules.LoadRuleFiles([]string{rf})
	if err != nil {
		t.Fatal(err)
	}
	ev := &Evaluator{Policy: Policy{Ask: OnRequest}, Rules: ruleSet}
	sb := Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{ws}}
	env := map[string]string{}
	gitfacts.Env = func(k string) string { return env[k] }
	t.Cleanup(func() { gitfacts.Env = os.Getenv })
	cases := []struct {
		name   string
		argv   []string
		env    map[string]string
		bypass bool
	}{
		{"twin: the workspace's repository", []string{"git", "status"}, nil, true},
		{"twin: a submodule (git dir in .git/modules)", []string{"git", "-C", "m", "status"}, nil, true},
		{"twin: a worktree (git dir in .git/worktrees)", []string{"git", "-C", "wt", "status"}, nil, true},
		{"twin: a repository outside the writable roots", []string{"git", "-C", filepath.Join(outside, "repo"), "status"}, nil, true},
		{"twin: not git", []string{"bash", "-c", "cd sub"}, nil, true},
		{"attack: -C into a nested repository", []string{"git", "-C", "sub", "status"}, nil, false},
		{"attack: cd into a nested repository", []string{"bash", "-c", "cd sub && git status"}, nil, false},
		{"attack: cd through $HOME", []string{"bash", "-c", "cd ~/x && git status"}, nil, false},
		{"attack: --git-dir to a bare repository", []string{"git", "--git-dir=bare.git", "status"}, nil, false},
		{"attack: --git-dir as two words", []string{"git", "--git-dir", "sub/.git", "log"}, nil, false},
		{"attack: a bare repository found from cwd", []string{"git", "-C", "bare.git", "status"}, nil, false},
		{"attack: a .git file pointing into the tree", []string{"git", "-C", "evil", "status"}, nil, false},
		{"attack: GIT_DIR in the environment", []string{"git", "status"}, map[string]string{"GIT_DIR": filepath.Join(ws, "sub/.git")}, false},
		{"attack: GIT_COMMON_DIR in the environment", []string{"git", "status"}, map[string]string{"GIT_COMMON_DIR": filepath.Join(ws, "sub/.git")}, false},
		{"attack: GIT_CONFIG_GLOBAL in the workspace", []string{"git", "status"}, map[string]string{"GIT_CONFIG_GLOBAL": filepath.Join(ws, "gitconfig")}, false},
	}
	for _, c := range cases {
		env = c.env
		e := ev.Evaluate(CommandRequest{Argv: c.argv, Cwd: ws, Sandbox: sb})
		if got := gitfacts.StaysProtected(e.Analysis, ws, sb.Policy()); e.Decision != rules.Allow || e.BypassSandbox || got != c.bypass {
			t.Errorf("%s: %v: decision %s bypass %v protected %v, want allow in the sandbox, protected %v (%s)", c.name, c.argv, e.Decision, e.BypassSandbox, got, c.bypass, e.Reason)
		}
	}
}

// outsideTempDirs is a directory for test files that lies outside /tmp and
// $TMPDIR: the user's cache directory, /var/tmp, or the package directory.
func outsideTempDirs(t *testing.T) string {
	t.Helper()
	var temps []string
	for _, d := range []string{"/tmp", os.TempDir()} {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			temps = append(temps, r)
		}
	}
	cache, _ := os.UserCacheDir()
	for _, d := range []string{cache, "/var/tmp", "."} {
		r, err := filepath.EvalSymlinks(d)
		if d == "" || err != nil {
			continue
		}
		r, _ = filepath.Abs(r)
		inTemp := false
		for _, tmp := range temps {
			if r == tmp || strings.HasPrefix(r, tmp+string(filepath.Separator)) {
				inTemp = true
			}
		}
		if !inTemp {
			return r
		}
	}
	t.Skip("no directory outside /tmp and $TMPDIR to hold a repository the sandbox cannot write")
	return ""
}
