package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// Each run resolves the protected paths afresh (its memo is its own): a
// link repointed between two runs moves the protection with it. Attack: the
// write into the directory the link names now is refused in each run. Twin:
// the directory it no longer names is writable again.
func TestRunMemoSeesALinkRepointedBetweenRuns(t *testing.T) {
	ws, ln := linkedKeeps(t)
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws},
		ProtectedPaths: []string{filepath.Join(ln, "keep")}}
	write := func(dir string) int {
		return run(t, ws, Command{Argv: sh(`echo x > ` + dir + `/keep/f`), Policy: pol}).ExitCode
	}
	if write("a") == 0 {
		t.Fatal("run 1: a/keep, named by the protected link, was writable")
	}
	if code := write("b"); code != 0 {
		t.Fatalf("run 1: b/keep, not protected, exit %d", code)
	}
	os.Remove(filepath.Join(ws, "b", "keep", "f"))

	if err := os.Remove(ln); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "b"), ln); err != nil {
		t.Fatal(err)
	}
	if write("b") == 0 {
		t.Fatal("run 2: b/keep, which the link names now, was writable: the first run's resolution was reused")
	}
	if code := write("a"); code != 0 {
		t.Fatalf("run 2: a/keep, no longer protected, exit %d", code)
	}
}

// A protected path missing in one run and made by the user before the next
// is read-only in the next, not moved away as the command's making. Attack:
// the second run's write into it is refused and nothing is moved. Twin: in
// the first run, the command's own creation is moved away and reported.
func TestRunMemoSeesAProtectedPathMadeBetweenRuns(t *testing.T) {
	ws := t.TempDir()
	prot := filepath.Join(ws, "guarded")
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws}, ProtectedPaths: []string{prot}}

	res := run(t, ws, Command{Argv: sh(`mkdir guarded && echo x > guarded/f`), Policy: pol})
	if len(res.Removed) != 1 || res.Removed[0].Path != prot {
		t.Fatalf("run 1: the command's guarded was not moved away: %+v (exit %d, %s)", res.Removed, res.ExitCode, res.Output)
	}
	if _, err := os.Lstat(prot); err == nil {
		t.Fatal("run 1: guarded is still there")
	}

	if err := os.Mkdir(prot, 0o755); err != nil { // the user's own, between runs
		t.Fatal(err)
	}
	res = run(t, ws, Command{Argv: sh(`echo x > guarded/f`), Policy: pol})
	if res.ExitCode == 0 {
		t.Fatal("run 2: guarded, which exists now, was writable")
	}
	if len(res.Removed) != 0 {
		t.Fatalf("run 2: the user's guarded was taken for the command's: %+v", res.Removed)
	}
	entries, err := os.ReadDir(prot)
	if err != nil || len(entries) != 0 {
		t.Fatalf("run 2: guarded changed: %v, %v", entries, err)
	}
	if got := listTree(t, ws); !slices.Equal(got, []string{"guarded"}) {
		t.Fatalf("workspace holds %v", got)
	}
}

// The memo a caller shares among the checks before a run's decision
// (WithSetupMemo) is not the run's: Start resolves afresh, so a link
// repointed after those checks (while a prompt was open, say) moves the
// protection with it. Attack: the write into the directory the link names
// at the run is refused. Twin: the one it named at the checks is writable.
func TestStartDoesNotUseTheSetupMemo(t *testing.T) {
	ws, ln := linkedKeeps(t)
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws},
		ProtectedPaths: []string{filepath.Join(ln, "keep")}}.WithSetupMemo(pathmemo.New())
	roots, err := pol.Roots()
	if err != nil || len(roots) != 1 || !slices.Contains(roots[0].Protected, filepath.Join(ws, "a", "keep")) {
		t.Fatalf("the checks before the decision: %+v, %v", roots, err)
	}
	if err := os.Remove(ln); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "b"), ln); err != nil {
		t.Fatal(err)
	}
	if again, _ := pol.Roots(); !slices.Contains(again[0].Protected, filepath.Join(ws, "a", "keep")) {
		t.Fatalf("the setup memo did not serve the second check: %+v", again)
	}
	res := run(t, ws, Command{Argv: sh(`echo x > b/keep/f; echo b=$?; echo x > a/keep/f; echo a=$?`), Policy: pol})
	out := string(res.Output)
	if !strings.Contains(out, "a=0") {
		t.Errorf("a/keep, no longer named by the link, was not writable: %s", out)
	}
	if strings.Contains(out, "b=0") {
		t.Fatalf("b/keep, which the link names at the run, was writable: Start used the setup memo: %s", out)
	}
}

// linkedKeeps is a workspace with a/keep and b/keep, and a link ln to a
// beside it.
func linkedKeeps(t *testing.T) (ws, ln string) {
	t.Helper()
	ws = t.TempDir()
	for _, d := range []string{"a/keep", "b/keep"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Outside the workspace, where no command can replace it (one inside
	// refuses the run: TestProtectedPathThroughALinkInTheRootRefused).
	ln = filepath.Join(t.TempDir(), "ln")
	if err := os.Symlink(filepath.Join(ws, "a"), ln); err != nil {
		t.Fatal(err)
	}
	return ws, ln
}

// A protected path the root reaches through a link of its own (a home
// directory as the workspace: ~/.config -> dotfiles/config, ~/.bashrc ->
// dotfiles/bashrc) was held at the link's target, and a command replaced
// the link with its own directory or file, which the host then read.
// Attack: the run is refused naming the link, and nothing runs. Twin: the
// same paths without links run, held read-only.
func TestProtectedPathThroughALinkInTheRootRefused(t *testing.T) {
	for _, linked := range []string{".config", ".bashrc"} {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, "dotfiles", "config", "warden"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "dotfiles", "bashrc"), []byte("# rc\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		target := map[string]string{".config": "dotfiles/config", ".bashrc": "dotfiles/bashrc"}[linked]
		if err := os.Symlink(target, filepath.Join(ws, linked)); err != nil {
			t.Fatal(err)
		}
		prot := map[string]string{".config": filepath.Join(ws, ".config", "warden"), ".bashrc": filepath.Join(ws, ".bashrc")}[linked]
		pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws}, ProtectedPaths: []string{prot}}
		attack := `rm ` + linked + ` && mkdir -p .config/warden && echo 'sandbox_mode = "danger-full-access"' > .config/warden/config.toml; echo evil > .bashrc`
		_, err := Run(context.Background(), Command{Argv: sh(attack), Cwd: ws, Helper: testHelper, Policy: pol})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(ws, linked)) || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("%s: err = %v, want a refusal naming the link", linked, err)
		}
		if st, err := os.Lstat(filepath.Join(ws, linked)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s: the command ran", linked)
		}
	}

	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".config", "warden"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws}, ProtectedPaths: []string{filepath.Join(ws, ".config", "warden")}}
	res := run(t, ws, Command{Argv: sh(`echo x > .config/warden/config.toml; echo w=$?; echo ok > f`), Policy: pol})
	if strings.Contains(string(res.Output), "w=0") || readFile(t, filepath.Join(ws, "f")) != "ok\n" {
		t.Errorf("twin: without links the run was not as expected: %s", res.Output)
	}
}
