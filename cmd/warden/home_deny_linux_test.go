package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A home directory inside a writable root is deny-by-default: its
// dot-entries are read-only, a new one is moved away, and home_writable
// lifts exactly what it names. --yes approves whatever is asked, so what
// stops each attack is the sandbox.

// livedInHome is a home with the start-up files of tools no list names.
func livedInHome(t *testing.T) string {
	home := toolHome(t)
	writeFiles(t, home, map[string]string{
		".local/lib/python3.12/site-packages/keep.txt": "",
		".wezterm.lua": "-- mine\n",
		".ipython/profile_default/startup/README": "mine\n",
		".config/Code/User/settings.json":         "{}\n",
		"notes/plan.txt":                          "plan\n",
	})
	return home
}

func TestHomeDotEntriesReadOnly(t *testing.T) {
	home := livedInHome(t)
	env := homeEnv(home)
	quarantine := filepath.Join(home, ".local", "state", "warden", "quarantine")
	// path, when set, is what the attack would leave behind.
	for _, attack := range []struct{ script, path string }{
		{`echo 'import os; os.system("id")' > .local/lib/python3.12/site-packages/x.pth`, ".local/lib/python3.12/site-packages/x.pth"},
		{`echo 'os.execute("id")' >> .wezterm.lua`, ""},
		{`echo 'import os' > .ipython/profile_default/startup/00-x.py`, ".ipython/profile_default/startup/00-x.py"},
		{`echo '{"terminal.integrated.shellArgs.linux":["-c","id"]}' > .config/Code/User/settings.json`, ""},
		{`mv .ipython .ipython.old && mkdir .ipython`, ".ipython.old"},
		// New at the top: moved away when made.
		{`echo 'import os' > .pythonrc.py`, ".pythonrc.py"},
		{`mkdir -p .newtool/plugins && echo x > .newtool/plugins/init.lua`, ".newtool"},
	} {
		_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", home, "--", "sh", "-c", attack.script)
		undone := strings.Contains(errOut, " it created: protected path; kept at "+quarantine)
		if !undone && (code == 0 || !denied(errOut) && !strings.Contains(errOut, "busy")) {
			t.Errorf("attack %q: exit %d %s", attack.script, code, errOut)
		}
		if _, err := os.Lstat(filepath.Join(home, attack.path)); err == nil && attack.path != "" {
			t.Errorf("attack %q: %s is there", attack.script, attack.path)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".wezterm.lua")); string(b) != "-- mine\n" {
		t.Errorf(".wezterm.lua changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".config/Code/User/settings.json")); string(b) != "{}\n" {
		t.Errorf("settings.json changed: %q", b)
	}

	// Twins: the rest of home is the workspace, writable as before.
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--", "sh", "-c",
		`echo n > notes.txt && echo more >> notes/plan.txt && mkdir -p project && echo y > project/main.go && cat .wezterm.lua >/dev/null`)
	if code != 0 {
		t.Fatalf("twin: writing home beside its dot-entries: exit %d %s", code, errOut)
	}
	for rel, want := range map[string]string{"notes.txt": "n\n", "notes/plan.txt": "plan\nmore\n", "project/main.go": "y\n"} {
		if b, err := os.ReadFile(filepath.Join(home, rel)); err != nil || string(b) != want {
			t.Errorf("twin: %s = %q %v", rel, b, err)
		}
	}
}

// home_writable names what stays writable: an entry at the top and one
// deeper inside a read-only dot-directory; their siblings stay read-only.
func TestHomeWritableAllows(t *testing.T) {
	home := livedInHome(t)
	writeFiles(t, home, map[string]string{".npm-global/keep": "", ".cache/foo/keep": "", ".cache/other/keep": ""})
	writeWardenConfig(t, home, `home_writable = [".npm-global", "~/.cache/foo", ".newtool"]`+"\n")
	env := homeEnv(home)
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--", "sh", "-c",
		`echo a > .npm-global/a && echo b > .cache/foo/b && mkdir .newtool && echo c > .newtool/c`)
	if code != 0 {
		t.Fatalf("twin: home_writable entries: exit %d %s", code, errOut)
	}
	for _, rel := range []string{".npm-global/a", ".cache/foo/b", ".newtool/c"} {
		if _, err := os.Stat(filepath.Join(home, rel)); err != nil {
			t.Errorf("twin: %s was not written: %v", rel, err)
		}
	}
	if out, _, _ := wardenIn(t, env, "doctor"); !strings.Contains(out, "every dot-entry at its top is read-only and one a command creates there is moved away, except: .npm-global, ~/.cache/foo, .newtool\n") {
		t.Errorf("doctor does not say what home_writable allows:\n%s", out)
	}
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", home, "--", "sh", "-c", `echo x > .cache/other/x`)
	if code == 0 || !denied(errOut) {
		t.Errorf("attack: a sibling of an allowed entry was writable: exit %d %s", code, errOut)
	}

	writeWardenConfig(t, home, `home_writable = ["../etc"]`+"\n")
	if _, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--", "true"); code == 0 || !strings.Contains(errOut, `home_writable "../etc"`) {
		t.Errorf("home_writable with .. was taken: exit %d %s", code, errOut)
	}
}

// A directory on the user's PATH inside the workspace is read-only: a
// program planted there runs the next time the host calls it. One that does
// not exist yet is moved away when the command makes it.
func TestPathDirsInWorkspaceReadOnly(t *testing.T) {
	home, ws := toolHome(t), t.TempDir()
	writeFiles(t, ws, map[string]string{"bin/tool": "#!/bin/sh\necho mine\n", "src/main.go": "package main\n"})
	path := filepath.Join(ws, "bin") + ":" + filepath.Join(ws, "node_modules", ".bin") + ":" + os.Getenv("PATH")
	env := append(homeEnv(home), "PATH="+path)
	for _, attack := range []string{
		`printf '#!/bin/sh\nid\n' > bin/git && chmod +x bin/git`,
		`echo evil >> bin/tool`,
		`mv bin bin.old && mkdir bin && printf '#!/bin/sh\nid\n' > bin/git`,
		`mkdir -p node_modules/.bin && printf '#!/bin/sh\nid\n' > node_modules/.bin/code`,
	} {
		_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", ws, "--", "sh", "-c", attack)
		undone := strings.Contains(errOut, "the sandbox removed node_modules/.bin it created")
		if !undone && (code == 0 || !denied(errOut) && !strings.Contains(errOut, "busy")) {
			t.Errorf("attack %q: exit %d %s", attack, code, errOut)
		}
	}
	for _, p := range []string{"bin/git", "bin.old", "node_modules/.bin/code"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s is there", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "bin/tool")); string(b) != "#!/bin/sh\necho mine\n" {
		t.Errorf("bin/tool changed: %q", b)
	}
	// Twin: the rest of the workspace is writable, the PATH programs run.
	out, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", `echo x >> src/main.go && mkdir -p node_modules/left-pad && sh bin/tool`)
	if code != 0 || out != "mine\n" {
		t.Errorf("twin: exit %d %q %s", code, out, errOut)
	}
}

// Toolchains still run unasked in a workspace at home: go test, git commit,
// npm test, cargo test.
func TestHomeWorkspaceToolchains(t *testing.T) {
	need(t, "go", "git")
	home := livedInHome(t)
	env := toolEnv(home)
	writeFiles(t, home, map[string]string{
		"go.mod":      "module example.com/h\n\ngo 1.21\n",
		"h.go":        "package h\n\nfunc Two() int { return 2 }\n",
		"h_test.go":   "package h\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal()\n\t}\n}\n",
		"repo/README": "r\n",
	})
	hostGit(t, filepath.Join(home, "repo"), "init", "-q")
	script := `go test . && cd repo && git -c user.name=a -c user.email=a@b add README && git -c user.name=a -c user.email=a@b commit -qm first && git log --oneline | wc -l`
	out, errOut, code := sandboxed(t, env, home, script)
	if code != 0 || !strings.Contains(out, "ok  \texample.com/h") || !strings.HasSuffix(out, "1\n") {
		t.Fatalf("go test and git commit in a home workspace: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := exec.LookPath("npm"); err == nil {
		writeFiles(t, home, map[string]string{"web/package.json": `{"name":"w","version":"1.0.0","scripts":{"test":"node -e \"console.log('npm-ok')\""}}`})
		out, errOut, code := sandboxed(t, env, home, `cd web && npm test`)
		if code != 0 || !strings.Contains(out, "npm-ok") {
			t.Errorf("npm test in a home workspace: exit %d\n%s\n%s", code, out, errOut)
		}
	}
	if cargoRunsWithHome(t) {
		writeFiles(t, home, map[string]string{
			"crate/Cargo.toml": "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"crate/src/lib.rs": "pub fn two() -> i32 { 2 }\n#[cfg(test)]\nmod t { #[test] fn two() { assert_eq!(super::two(), 2); } }\n",
		})
		out, errOut, code := sandboxed(t, env, home, `cd crate && cargo test --offline -q 2>&1`)
		if code != 0 || !strings.Contains(out, "test result: ok") {
			t.Errorf("cargo test in a home workspace: exit %d\n%s\n%s", code, out, errOut)
		}
	}
}

// cargoRunsWithHome says whether cargo runs for a user whose HOME is not
// the real one (toolEnv finds the real ~/.rustup; under .ci/gotest.sh the
// real home is a fresh one with no toolchain, and rustup would try to make
// ~/.rustup in the test's home).
func cargoRunsWithHome(t *testing.T) bool {
	t.Helper()
	if _, err := exec.LookPath("cargo"); err != nil {
		return false
	}
	probe := exec.Command("cargo", "--version")
	probe.Env = toolEnv(t.TempDir())
	if err := probe.Run(); err != nil {
		t.Log("cargo does not run with this HOME (no toolchain reachable): its case is skipped")
		return false
	}
	return true
}

// A repository inside a held dot-directory (~/.config/nvim under git, with
// the workspace at ~) stays read-only whole: the git split that keeps a
// workspace repository's data writable must not reopen it, or a sandboxed
// run could move its branch to a commit of its own that the user's next
// checkout there brings into their editor's config. The twin: a repository
// in an ordinary directory of home keeps its data writable (commits work).
func TestHomeHeldRepositoryStaysReadOnly(t *testing.T) {
	need(t, "git")
	home := livedInHome(t)
	env := homeEnv(home)
	for _, dir := range []string{".config/nvim", "code/app"} {
		os.MkdirAll(filepath.Join(home, dir), 0o755)
		os.WriteFile(filepath.Join(home, dir, "init.lua"), []byte("-- mine\n"), 0o644)
		hostGit(t, filepath.Join(home, dir), "init", "-q")
		hostGit(t, filepath.Join(home, dir), "-c", "user.name=a", "-c", "user.email=a@b", "add", ".")
		hostGit(t, filepath.Join(home, dir), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "first")
	}
	commit := `git -c user.name=a -c user.email=a@b commit -q --allow-empty -m planted`
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", home, "--", "sh", "-c", "cd .config/nvim && "+commit)
	if code == 0 {
		t.Errorf("attack: a commit in the held ~/.config/nvim repository went through: %s", errOut)
	}
	if out, _ := exec.Command("git", "-C", filepath.Join(home, ".config/nvim"), "log", "--oneline").Output(); strings.Contains(string(out), "planted") {
		t.Errorf("attack: the held repository's history changed: %s", out)
	}
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", home, "--", "sh", "-c", "cd code/app && "+commit)
	if code != 0 {
		t.Errorf("twin: a commit in ~/code/app: exit %d %s", code, errOut)
	}
}
