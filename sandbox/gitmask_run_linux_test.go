package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
)

func maskRoots(t *testing.T) (string, func() []protect.Root) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--template=", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return ws, func() []protect.Root {
		roots := []protect.Root{{Path: ws, Protected: []string{filepath.Join(ws, ".git")}}}
		protect.SplitGitDirs(roots)
		return roots
	}
}

// In a process that keeps spares (the language server), a run's
// placeholders go once its result is reported (RefillSpares), not before:
// the run after, started first, shares them, and the release is off the
// path of the result. A one-command process removes them before Wait
// returns.
func TestGitMaskReleasedAfterTheReport(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "one command", true: "spares"}[keep], func(t *testing.T) {
			if keep {
				withSpares(t)
			}
			ws, _ := maskRoots(t)
			modules := filepath.Join(ws, ".git", "modules")
			res := run(t, ws, Command{Argv: sh(`test -d .git/modules && echo held`)})
			if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "held") {
				t.Fatalf("the run did not see the placeholder: exit %d %s %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			_, err := os.Lstat(modules)
			if !keep {
				if err == nil {
					t.Fatal("a one-command run left its placeholder after Wait")
				}
				return
			}
			if err != nil {
				t.Fatalf("the placeholder went before the result was reported: %v", err)
			}
			RefillSpares()
			if _, err := os.Lstat(modules); err == nil {
				t.Fatal("the placeholder stayed after the report")
			}
			spares.settle()
		})
	}
}
