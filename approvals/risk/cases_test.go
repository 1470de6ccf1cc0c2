package risk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/sandbox"
)

// Copies of the approvals tests' helpers that the risk tests share.

// looseWorkspace is a workspace with a .env, a .env.example, a README and
// a tracked-looking file, and a home holding credential stores.
func looseWorkspace(t *testing.T) (ws, home string) {
	t.Helper()
	ws, home = riskWorkspace(t, 3)
	for _, f := range []string{".env", ".env.local", ".env.example", "README.md", "main.go"} {
		os.WriteFile(filepath.Join(ws, f), []byte("X=1\n"), 0o644)
	}
	for _, f := range []string{".aws/credentials", ".netrc", ".npmrc", ".pypirc", ".docker/config.json", ".kube/config", ".claude.json", ".git-credentials", ".config/gh/hosts.yml"} {
		os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o700)
		os.WriteFile(filepath.Join(home, f), []byte("secret\n"), 0o600)
	}
	return ws, home
}

type riskCase struct {
	argv  []string
	level Level
	fact  string // a substring of one fact; "" for no fact required
	not   string // a substring no fact may hold
}

func checkRisk(t *testing.T, ctx Context, cases []riskCase) {
	t.Helper()
	for _, c := range cases {
		r := Assess(command.Analyze(c.argv), ctx)
		if r.Level != c.level {
			t.Errorf("%q: level %s, want %s (facts %q)", c.argv, r.Level, c.level, r.Facts)
		}
		if c.fact != "" && !anyContains(r.Facts, c.fact) {
			t.Errorf("%q: facts %q lack %q", c.argv, r.Facts, c.fact)
		}
		if c.not != "" && anyContains(r.Facts, c.not) {
			t.Errorf("%q: facts %q hold %q", c.argv, r.Facts, c.not)
		}
	}
}

// looseContext is the risk context of a looseWorkspace: its workspace as
// the working directory and the sandbox's, and its home.
func looseContext(t *testing.T) Context {
	t.Helper()
	ws, home := looseWorkspace(t)
	return Context{Cwd: ws, Sandbox: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: []string{ws}}, Home: home}
}

func sh(s string) []string { return []string{"bash", "-lc", s} }
