package gitfacts

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// The index is where git finds the submodules it recurses into; every
// index version git writes must yield them (an unreadable one fails closed).
func TestProtectedSubmoduleIndexGitlinks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "lib")
	gitIn(t, filepath.Join(dir, "lib"), "commit", "-q", "--allow-empty", "-m", "x")
	gitIn(t, dir, "init", "-q", "top")
	top := filepath.Join(dir, "top")
	for _, f := range []string{"a", "deep/dir/with/a/long/name/b", "deep/dir/with/a/long/name/c"} {
		os.MkdirAll(filepath.Dir(filepath.Join(top, f)), 0o755)
		os.WriteFile(filepath.Join(top, f), []byte(f), 0o644)
	}
	gitIn(t, top, "add", ".")
	gitIn(t, top, "submodule", "add", "-q", filepath.Join(dir, "lib"), "deep/dir/with/a/long/name/lib")
	gitIn(t, top, "submodule", "add", "-q", filepath.Join(dir, "lib"), "m")
	want := []string{"deep/dir/with/a/long/name/lib", "m"}
	for _, v := range []string{"2", "3", "4"} {
		gitIn(t, top, "update-index", "--index-version", v)
		got, err := indexGitlinks(filepath.Join(top, ".git", "index"), 20)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("index version %s: gitlinks %v (%v), want %v", v, got, err, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "bad"), []byte("DIRC\x00\x00\x00\x07\x00\x00\x00\x01"+string(make([]byte, 40))), 0o644)
	if _, err := indexGitlinks(filepath.Join(dir, "bad"), 20); err == nil {
		t.Error("an index of an unknown version was read")
	}
}

// A hooks directory or an included config the sandbox could have written
// keeps a git command in the sandbox; the same settings pointing into the
// protected .git (or nowhere) do not.
func TestProtectedSubmoduleConfigReachesIntoWorkTree(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	j := Judge{Roots: ResolvedRoots([]string{ws})}
	cases := []struct {
		name, config string
		ok           bool
	}{
		{"twin: plain config", "[core]\n\tbare = false\n", true},
		{"twin: hooks inside .git", "[core]\n\thooksPath = .git/hooks\n", true},
		{"twin: include inside .git", "[include]\n\tpath = shared.cfg\n", true},
		{"attack: husky hooks in the work tree", "[core]\n\thooksPath = .husky\n", false},
		{"attack: include from the work tree", "[include]\n\tpath = ../.gitconfig\n", false},
		{"attack: includeIf from the work tree", "[includeIf \"gitdir:~/\"]\n\tpath = ../team.cfg ; team\n", false},
		{"attack: a continued include line", "[include]\n\tpath = ../te\\\nam.cfg\n", false},
	}
	for _, c := range cases {
		os.WriteFile(filepath.Join(ws, ".git", "config"), []byte(c.config), 0o644)
		if got := j.repoProtected(filepath.Join(ws, ".git"), ws, false, 0); got != c.ok {
			t.Errorf("%s: protected %v, want %v", c.name, got, c.ok)
		}
	}
}
