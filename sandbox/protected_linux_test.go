package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Warden's own directories inside a writable root are masked while missing,
// and the masks leave nothing behind: the workspace holds only what the user
// and the command made.
func TestProtectedPathsMaskedWhileMissingLeaveNoTrace(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, ".config"), 0o755); err != nil { // the user's own
		t.Fatal(err)
	}
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws},
		ProtectedPaths: []string{filepath.Join(ws, ".config", "warden"), filepath.Join(ws, ".local", "state", "warden")}}
	// Inside: the names exist (masks) and cannot be written; a sibling can.
	res := run(t, ws, Command{Argv: sh(`test -e .config/warden && test -e .local && ! mkdir -p .config/warden/rules 2>/dev/null && ! mkdir -p .local/state 2>/dev/null && mkdir .config/other`), Policy: pol})
	if res.ExitCode != 0 {
		t.Fatalf("masks inside the sandbox: %+v %s", res, res.Output)
	}
	FlushPlaceholders()
	var got []string
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if p != ws {
			rel, _ := filepath.Rel(ws, p)
			got = append(got, rel)
		}
		return nil
	})
	if want := []string{".config", ".config/other"}; !slices.Equal(got, want) {
		t.Errorf("workspace after the run holds %v, want %v", got, want)
	}
}

// A writable root inside Warden's own directories is refused: it could not
// be written without writing them.
func TestProtectedPathsRefuseARootInsideThem(t *testing.T) {
	ws := t.TempDir()
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true, Workspace: []string{ws}, ProtectedPaths: []string{ws}}
	if _, err := pol.Roots(); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("root inside a protected path: %v", err)
	}
	// Twin: a protected path elsewhere does not matter.
	pol.ProtectedPaths = []string{filepath.Join(t.TempDir(), "warden")}
	if roots, err := pol.Roots(); err != nil || len(roots) != 1 || len(roots[0].Protected) != len(ProtectedNames) {
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
	got := walkRepos(ws, nil, -1)
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
	got = walkRepos(ws, []string{filepath.Join(ws, "a")}, 2)
	slices.Sort(got)
	if want := []string{filepath.Join(ws, "store"), filepath.Join(ws, "wt/.git")}; !slices.Equal(got, want) {
		t.Errorf("bounded walk found %v, want %v", got, want)
	}
}
