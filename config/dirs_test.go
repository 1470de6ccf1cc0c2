package config

import (
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// With HOME unset, Warden's dirs come from the password entry, never from
// $TMPDIR (a writable root of the sandbox).
func TestProtectedDirsNeverUnderTmpdirWithoutHome(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || u.HomeDir == "/" || strings.HasPrefix(u.HomeDir, tmp) {
		if CheckDirs() == nil {
			t.Errorf("no usable home, but CheckDirs accepts: config %s", ConfigDir())
		}
		return
	}
	for _, d := range []string{ConfigDir(), StateDir()} {
		if strings.HasPrefix(d, tmp) || !strings.HasPrefix(d, u.HomeDir) {
			t.Errorf("dir %s with HOME unset: want under %s, never under %s", d, u.HomeDir, tmp)
		}
	}
	if err := CheckDirs(); err != nil {
		t.Errorf("CheckDirs: %v", err)
	}
	// Twin: with HOME set, it is used.
	t.Setenv("HOME", tmp)
	if ConfigDir() != filepath.Join(tmp, ".config", "warden") {
		t.Errorf("config dir %s with HOME=%s", ConfigDir(), tmp)
	}
}

func TestProtectedPathsListWardenAndGitConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	got := ProtectedPaths(Config{CodexRulesDir: filepath.Join(home, "codex-rules")})
	for _, want := range []string{".config/warden", ".local/state/warden", "codex-rules", ".gitconfig", ".config/git"} {
		if !slices.Contains(got, filepath.Join(home, want)) {
			t.Errorf("protected paths %v lack %s", got, want)
		}
	}
}

func TestProtectedStartupFilesListed(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("ZDOTDIR", filepath.Join(home, "zsh"))
	got := ProtectedPaths(Config{})
	for _, want := range []string{
		filepath.Join(home, ".bashrc"), filepath.Join(home, ".ssh"), filepath.Join(home, ".config/systemd/user"),
		filepath.Join(xdg, "systemd/user"), filepath.Join(xdg, "fish"), filepath.Join(home, "zsh/.zshrc"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("protected paths lack %s", want)
		}
	}
	if slices.Contains(got, filepath.Join(home, ".config")) || slices.Contains(got, home) {
		t.Errorf("protected paths hold a whole directory users write: %v", got)
	}
}
