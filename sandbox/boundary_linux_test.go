package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// A command's working directory is no writable root: run in a home-like
// directory outside the workspace, it cannot write there; the twin, run in
// a subdirectory of the workspace, writes as before.
func TestBoundaryCwdOutsideTheWorkspaceIsNotWritable(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	attack := run(t, ws, Command{Argv: sh(`echo pwned >> .bashrc`), Cwd: home, Policy: pol})
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil || attack.ExitCode == 0 {
		t.Fatalf("a command run in %s wrote .bashrc there (exit %d)", home, attack.ExitCode)
	}
	// A link the sandbox made inside the workspace, pointing out, is no way
	// round it either.
	link := filepath.Join(ws, "out")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	viaLink := run(t, ws, Command{Argv: sh(`echo pwned >> .bashrc`), Cwd: link, Policy: pol})
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil || viaLink.ExitCode == 0 {
		t.Fatalf("a command run in %s (-> %s) wrote .bashrc (exit %d)", link, home, viaLink.ExitCode)
	}
	twin := run(t, ws, Command{Argv: sh(`echo ok > made && cat made`), Cwd: sub, Policy: pol})
	if twin.ExitCode != 0 || string(twin.Stdout) != "ok\n" {
		t.Fatalf("the twin in %s: %+v", sub, twin)
	}
}
