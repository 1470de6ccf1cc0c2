package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree makes each file of files (relative to dir) with its content.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every VCS's metadata, at the top of the workspace and nested, is split
// as a git dir is: what the tool executes or obeys (Mercurial's hgrc,
// Jujutsu's repo config and the git dir its store runs git on, Bazaar's
// branch.conf, darcs's prefs/defaults, Pijul's config, Fossil's checkout
// database) cannot be written. Twin: the tool's data beside them (hg's
// store, jj's op log, darcs's patches, a git dir's objects inside .jj,
// .svn's wc.db, which runs nothing) and the work tree stay writable.
func TestVCSMetadataObeyedReadOnlyDataWritable(t *testing.T) {
	ws := t.TempDir()
	obeyed := []string{
		".hg/hgrc", ".hg/sharedpath", ".sl/config",
		".jj/repo/config.toml", ".jj/repo/store/type", ".jj/repo/store/git/config", ".jj/repo/store/git/hooks/pre-commit",
		".bzr/branch/branch.conf", "_darcs/prefs/defaults", ".pijul/config", ".fslckout",
	}
	data := []string{
		".hg/store/data.i", ".sl/store/data", ".jj/repo/op_store/op", ".jj/repo/store/git/objects/ab",
		".bzr/repository/pack", "_darcs/patches/p", "_darcs/prefs/author", ".pijul/pristine/db", ".svn/wc.db",
	}
	files := map[string]string{".jj/repo/store/git/HEAD": "ref: refs/heads/main\n"}
	for _, top := range []string{"", "services/api"} {
		for _, f := range slices.Concat(obeyed, data) {
			files[filepath.Join(top, f)] = "kept\n"
		}
		files[filepath.Join(top, ".jj/repo/store/git/HEAD")] = "ref: refs/heads/main\n"
		files[filepath.Join(top, "src.txt")] = "kept\n"
	}
	writeTree(t, ws, files)
	var script strings.Builder
	for name := range files {
		if !strings.HasSuffix(name, "/HEAD") {
			script.WriteString("echo evil >> '" + name + "' 2>/dev/null\n")
		}
	}
	res := run(t, ws, Command{Argv: sh(script.String()), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	for name := range files {
		if strings.HasSuffix(name, "/HEAD") {
			continue
		}
		rel := strings.TrimPrefix(name, "services/api/")
		want := "kept\n"
		if !slices.Contains(obeyed, rel) {
			want += "evil\n" // data and the work tree: the tool's and the project's
		}
		if got := readFile(t, filepath.Join(ws, name)); got != want {
			t.Errorf("%s after the run: %q, want %q (%s)", name, got, want, res.Output)
		}
	}
}

// Obeyed entries that do not exist cannot be added: the ones the command
// creates in existing metadata are moved away, as is new metadata made in
// a directory that had none, at the top and one level down. Twin: data
// the tool creates there stays.
func TestVCSMetadataNewConfigMovedAway(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{".hg/requires": "store\n", "sub/.keep": "", "lib/.pijul/pristine/db": ""})
	script := `printf '[hooks]\nupdate = touch /tmp/pwned\n' > .hg/hgrc
echo 'store' > .hg/store.new
printf '[hooks]\nrecord = ["sh evil"]\n' > lib/.pijul/config
mkdir -p .jj/repo && echo '[ui]' > .jj/repo/config.toml
mkdir -p sub/.hg && echo '[hooks]' > sub/.hg/hgrc
mkdir -p new/pkg/_darcs/prefs && echo 'ALL posthook sh evil' > new/pkg/_darcs/prefs/defaults
echo x > sub/.fslckout`
	res := run(t, ws, Command{Argv: sh(script), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	var removed []string
	for _, r := range res.Removed {
		removed = append(removed, r.Shown)
	}
	for _, name := range []string{".hg/hgrc", "lib/.pijul/config", ".jj", "sub/.hg", "new/pkg/_darcs", "sub/.fslckout"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s was created and left (%s)", name, res.Output)
		}
		if !slices.Contains(removed, name) {
			t.Errorf("%s not reported as moved away: %q", name, removed)
		}
	}
	if got := readFile(t, filepath.Join(ws, ".hg/store.new")); got != "store\n" {
		t.Errorf("twin: the tool's data was not writable: %q", got)
	}
}

// The protected names hold at any depth, as the patch guard holds them: a
// mise.toml in a monorepo's package (mise trusts it by its path), an
// .envrc, a .vscode, a VS Code workspace file, a mise config under a
// package's .config. Twin: the files beside them stay writable.
func TestNestedProtectedNamesReadOnly(t *testing.T) {
	ws := t.TempDir()
	held := []string{
		"services/api/mise.toml", "services/api/.envrc", "pkg/web/.vscode/tasks.json",
		"pkg/web/app.code-workspace", "pkg/web/.config/mise.toml", "a/b/c/.mcp.json",
	}
	twins := []string{"services/api/main.go", "pkg/web/.config/other.toml", "pkg/web/vscode.md", "a/b/c/notes.txt"}
	files := map[string]string{}
	for _, f := range slices.Concat(held, twins) {
		files[f] = "kept\n"
	}
	writeTree(t, ws, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("echo '[hooks]' >> '" + name + "' 2>/dev/null\n")
	}
	res := run(t, ws, Command{Argv: sh(script.String()), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	for _, name := range held {
		if got := readFile(t, filepath.Join(ws, name)); got != "kept\n" {
			t.Errorf("attack: %s rewritten: %q", name, got)
		}
	}
	for _, name := range twins {
		if got := readFile(t, filepath.Join(ws, name)); got != "kept\n[hooks]\n" {
			t.Errorf("twin: %s not writable: %q (%s)", name, got, res.Output)
		}
	}
}

// With Mercurial installed: a sandboxed hg commits in the workspace's
// repository and in a nested one, and cannot add a hook the user's next hg
// would run.
func TestMercurialCommitsSandboxedHooksStayOut(t *testing.T) {
	if _, err := exec.LookPath("hg"); err != nil {
		t.Skip("hg not installed")
	}
	ws := t.TempDir()
	pwned := filepath.Join(t.TempDir(), "pwned")
	for _, d := range []string{ws, filepath.Join(ws, "vendor", "lib")} {
		os.MkdirAll(d, 0o755)
		if out, err := exec.Command("hg", "init", d).CombinedOutput(); err != nil {
			t.Fatalf("hg init: %v %s", err, out)
		}
		os.WriteFile(filepath.Join(d, "a.txt"), []byte("a\n"), 0o644)
	}
	script := `set -e
hg add -q a.txt && hg commit -q -u t -m one
cd vendor/lib && hg add -q a.txt && hg commit -q -u t -m one && cd ../..
for d in . vendor/lib; do printf '[hooks]\npre-status = touch ` + pwned + `\n' >> $d/.hg/hgrc || true; done
echo done`
	res := run(t, ws, Command{Argv: sh(script), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if !strings.Contains(string(res.Output), "done") {
		t.Fatalf("twin: sandboxed hg commit failed: %s", res.Output)
	}
	for _, d := range []string{ws, filepath.Join(ws, "vendor", "lib")} {
		out, err := exec.Command("hg", "-R", d, "log", "-q").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "0:") {
			t.Errorf("twin: %s has no commit: %v %s", d, err, out)
		}
		exec.Command("hg", "-R", d, "status").Run() // the user's next hg
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("attack: a hook the sandbox wrote ran on the host")
	}
}
