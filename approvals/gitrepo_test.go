package approvals

import (
	"os"
	"path/filepath"
	"testing"
)

// A rule's bypass is kept for git only when every repository the command
// could use is one the sandbox protects. Attacks use a repository a
// sandboxed command could have made; twins the workspace's own.
func TestProtectedGitRepositoryDecidesBypass(t *testing.T) {
	ws := t.TempDir()
	// Outside every place a sandbox writes (not under /tmp): beside the test.
	outside, err := os.MkdirTemp(".", ".gitrepo-test-")
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
	rules, err := LoadRuleFiles([]string{rf})
	if err != nil {
		t.Fatal(err)
	}
	ev := &Evaluator{Policy: Policy{Ask: OnRequest}, Rules: rules}
	sb := Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{ws}}
	env := map[string]string{}
	gitEnv = func(k string) string { return env[k] }
	t.Cleanup(func() { gitEnv = os.Getenv })
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
		if e.Decision != Allow || e.BypassSandbox != c.bypass {
			t.Errorf("%s: %v: decision %s bypass %v, want allow, bypass %v (%s)", c.name, c.argv, e.Decision, e.BypassSandbox, c.bypass, e.Reason)
		}
	}
}
