package shellenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// What an .envrc and a mise config pull in, as direnv's stdlib and mise
// read them: sourced files (followed), a directory's .envrc, dotenv's
// default .env, $PWD put in, mise's env._.source and env._.file in each
// form. Twin: paths given by other expansions, commands that only mention
// the words, and watch_file are not targets.
func TestTargets(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".envrc"), `# project env
source_env_if_exists .envrc.local
dotenv
dotenv_if_exists "$PWD/.env.private"
source "${PWD}/scripts/env.sh"
if [ -n "$CI" ]; then source_env ci; fi
source_env "$HOME/shared"
watch_file flake.nix
echo dotenv source_env
PATH_add bin
`)
	write(t, filepath.Join(dir, "scripts", "env.sh"), ". ./scripts/more.sh\n")
	if err := os.MkdirAll(filepath.Join(dir, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "mise.toml"), "[env]\n_.source = \"./tools/activate.sh\"\n_.file = [\".env.mise\", { path = \"secrets.env\", redact = true }]\n")
	write(t, filepath.Join(dir, ".config", "mise.toml"), "[env]\n_.file = \"cfg.env\"\n")
	write(t, filepath.Join(dir, "mise.ci.toml"), "[env]\n_.source = \"ci.sh\"\n")
	got := Targets(dir, func(k string) string {
		if k == "MISE_ENV" {
			return "ci"
		}
		return ""
	})
	want := []string{".envrc.local", ".env", ".env.private", "scripts/env.sh", "scripts/more.sh", "ci/.envrc",
		"tools/activate.sh", ".env.mise", "secrets.env", "cfg.env", "ci.sh"}
	for i, w := range want {
		want[i] = filepath.Join(dir, w)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Targets =\n %q\nwant\n %q", got, want)
	}
	// No .envrc and no mise config: nothing.
	if got := Targets(t.TempDir(), os.Getenv); len(got) != 0 {
		t.Errorf("Targets of an empty directory = %q", got)
	}
}

// A file outside the directory, or behind a symbolic link below it, is
// left out: it cannot be held read-only.
func TestTargetsLeaveOutLinksAndOutside(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	write(t, filepath.Join(elsewhere, "shared.env"), "A=1\n")
	if err := os.Symlink(filepath.Join(elsewhere, "shared.env"), filepath.Join(dir, ".env")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".envrc"), "dotenv\nsource linked/x.sh\nsource ../outside.sh\nsource_env_if_exists .envrc.local\n")
	if got, want := Targets(dir, os.Getenv), []string{filepath.Join(dir, ".envrc.local")}; !slices.Equal(got, want) {
		t.Errorf("Targets = %q, want %q", got, want)
	}
}
