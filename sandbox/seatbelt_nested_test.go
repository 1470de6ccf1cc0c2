package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// A workspace at the home directory holds ~/.cache read-only; the roots
// inside it (a deeper home_writable entry, the sandbox's own cache set) are
// writable again on macOS as the Linux helper reopens them, and what they
// hold (their protected names, their repository's config and hooks, in any
// case) is held again. Nothing else under the held path opens with them,
// and a reopened root cannot be moved away and back.
func TestSeatbeltReopensRootsNestedInAHeldPath(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	home := t.TempDir()
	foo := filepath.Join(home, ".cache", "foo")
	cacheRoot := filepath.Join(home, ".cache", "warden", "sandbox")
	set := toolcache.SetDir(cacheRoot, home)
	for _, d := range []string{foo, filepath.Join(set, toolcache.DataDir), filepath.Join(home, ".npm"), filepath.Join(home, ".config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, foo, nil, map[string]string{"main.go": "package main\n"})
	pol := Policy{Mode: WorkspaceWrite, Workspace: []string{home}, ExcludeSlashTmp: true, ExcludeTmpdir: true,
		HomeWritable: []string{".cache/foo", ".npm"}, Caches: toolcache.Caches{Root: cacheRoot}, Reads: ReadPolicy{Home: home}}
	roots, err := pol.Roots()
	if err != nil {
		t.Fatal(err)
	}
	protect.SplitGitDirs(roots)
	profile, params := SeatbeltProfile(pol, roots, 1)
	s := parseSBPL(t, profile, params)

	for _, rel := range []string{
		".cache/foo/x", ".cache/foo/main.go", ".cache/foo/.git/objects/ab/cd", ".cache/foo/.git/index",
		"set/data/go-build/x", ".npm/_cacache/x", "notes.txt", "project/main.go",
	} {
		if p := nestedPath(home, set, rel); !s.allowed("file-write*", p) {
			t.Errorf("twin: %s is not writable", p)
		}
	}
	for _, rel := range []string{
		".cache/other", ".cache/warden/x", ".cache", ".CACHE/foo/x", ".bashrc", ".config/x",
		".cache/foo", "set/data", "set/last-use",
		".cache/foo/.envrc", ".cache/foo/.ENVRC", ".cache/foo/.vscode/settings.json",
		".cache/foo/.git/config", ".cache/foo/.git/CONFIG", ".cache/foo/.git/hooks/pre-commit", ".cache/foo/.GIT/hooks/x",
		".cache/foo/.git",
	} {
		if p := nestedPath(home, set, rel); s.allowed("file-write*", p) {
			t.Errorf("write to %s allowed", p)
		}
	}
}

// nestedPath is rel under home, or under the cache set when it starts "set/".
func nestedPath(home, set, rel string) string {
	if r, ok := strings.CutPrefix(rel, "set/"); ok {
		return filepath.Join(set, r)
	}
	return filepath.Join(home, rel)
}

// A workspace inside another writable root (under /tmp, or under a
// configured root) cannot be moved away on macOS: the outer root's allow
// would otherwise let a command rename it, write its .git/config under a
// path no rule covers, and move it back. Its files and the outer root's
// other entries stay writable.
func TestSeatbeltPinsARootInsideAnother(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	outer := t.TempDir()
	ws := filepath.Join(outer, "a", "ws")
	gitRepo(t, ws, nil, map[string]string{"main.go": "package main\n"})
	pol := Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{outer}, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	roots, err := pol.Roots()
	if err != nil {
		t.Fatal(err)
	}
	protect.SplitGitDirs(roots)
	profile, params := SeatbeltProfile(pol, roots, 1)
	s := parseSBPL(t, profile, params)
	real, _ := filepath.EvalSymlinks(ws)
	for _, p := range []string{real, filepath.Dir(real)} {
		if s.allowed("file-write*", p) {
			t.Errorf("attack: %s, the workspace or a directory above it, can be renamed or removed through the outer root", p)
		}
	}
	for _, p := range []string{filepath.Join(real, "main.go"), filepath.Join(real, "new.txt"), filepath.Join(filepath.Dir(real), "other"), filepath.Join(filepath.Dir(filepath.Dir(real)), "b")} {
		if !s.allowed("file-write*", p) {
			t.Errorf("twin: %s is not writable", p)
		}
	}
}
