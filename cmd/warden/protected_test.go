package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Protected means protected everywhere (issue 18, class 3), through the real
// binary: every attack has a harmless twin that must keep working.

// wardenIn runs warden with env as the whole environment besides PATH.
func wardenIn(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(wardenBin(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	return runCmd(t, cmd)
}

// isolated is an environment whose config and state live in home.
func isolated(home string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
}

func hostGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func denied(errOut string) bool {
	return strings.Contains(errOut, "Read-only file system") || strings.Contains(errOut, "Permission denied") || strings.Contains(errOut, "Operation not permitted")
}

func TestProtectedNestedRepositoryIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(filepath.Join(ws, "vendor"), 0o755)
	hostGit(t, filepath.Join(ws, "vendor"), "init", "-q", "lib") // the user's own nested clone
	before, _ := os.ReadFile(filepath.Join(ws, "vendor/lib/.git/config"))
	env := isolated(home)

	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--",
		"sh", "-c", `printf '[core]\n\tfsmonitor = "id"\n' >> vendor/lib/.git/config`)
	after, _ := os.ReadFile(filepath.Join(ws, "vendor/lib/.git/config"))
	if code == 0 || !denied(errOut) || string(after) != string(before) {
		t.Errorf("attack: nested .git/config written: exit %d, stderr %q, config now %q", code, errOut, after)
	}
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--",
		"sh", "-c", `echo work > vendor/lib/notes.txt && mkdir -p vendor/lib/src && echo x > vendor/lib/src/a.go`)
	if code != 0 {
		t.Errorf("twin: writing the nested repository's work tree failed: exit %d %s", code, errOut)
	}
}

func TestProtectedNestedRepositoryFsmonitorNeverRunsOnHost(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	hostGit(t, home, "init", "-q", "ws") // the workspace's own repository
	marks := dirOutsideWritableRoots(t)
	rules := filepath.Join(home, "git.rules")
	os.WriteFile(rules, []byte(`prefix_rule(pattern=["git", "status"], decision="allow")
prefix_rule(pattern=["git", "-C", "sub", "status"], decision="allow")
prefix_rule(pattern=["cd"], decision="allow")
`), 0o644)
	env := isolated(home)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(marks, name)); return err == nil }

	// A sandboxed command may make a new repository and point its fsmonitor
	// at a program (and run git there, sandboxed); once it ends the new
	// repository is moved to the quarantine, and the user is told.
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--",
		"sh", "-c", `git init -q sub && git -C sub config core.fsmonitor "touch `+marks+`/nested" && git -C sub status >/dev/null`)
	if code != 0 {
		t.Fatalf("setting up the nested repository in the sandbox: exit %d %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(ws, "sub", ".git")); err == nil || !strings.Contains(errOut, "warden exec: the sandbox removed sub/.git it created: protected path; kept at "+filepath.Join(home, "state", "warden", "quarantine")) {
		t.Fatalf("the sandbox-made repository stayed (%v) or was not reported: %s", err, errOut)
	}
	// Attacks: git status there, under an allow rule: it runs in the
	// workspace's own repository now, and the marker never appears.
	for _, argv := range [][]string{{"git", "-C", "sub", "status"}, {"sh", "-c", "cd sub && git status"}} {
		wardenIn(t, env, append([]string{"exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--"}, argv...)...)
		if exists("nested") {
			t.Fatalf("%v ran the sandbox-made repository's fsmonitor on the host", argv)
		}
	}
	// Twin: git status in the workspace's own repository runs unasked, in
	// the sandbox (no rule takes it out), and works; the fsmonitor its
	// config names runs on the host no more than any other program.
	hostGit(t, ws, "config", "core.fsmonitor", "touch "+marks+"/top")
	out, _, _ := wardenIn(t, env, "policy", "check", "--json", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if !runsUnaskedInTheSandbox(out) {
		t.Errorf("twin: git status in the workspace's own repository: %s", out)
	}
	stdout, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--rules", rules, "--cwd", ws, "--", "git", "status")
	if code != 0 || !strings.Contains(stdout, "On branch") || exists("top") {
		t.Errorf("twin: git status under the rule: exit %d, marker %v, out %q err %q", code, exists("top"), stdout, errOut)
	}
}

// runsUnaskedInTheSandbox reads `warden policy check --json`: allowed, and
// bypass_sandbox present and false.
func runsUnaskedInTheSandbox(out string) bool {
	var v struct {
		Decision string `json:"decision"`
		Bypass   *bool  `json:"bypass_sandbox"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Bypass == nil {
		return false
	}
	return v.Decision == "allow" && !*v.Bypass
}

// homeEnv is the environment of a user whose workspace is $HOME, with XDG
// unset: Warden's config and state live inside the workspace.
func homeEnv(home string) []string { return []string{"HOME=" + home} }

func TestProtectedWardenConfigInHomeWorkspace(t *testing.T) {
	home := t.TempDir()
	// The user lets commands write ~/.config and ~/.local (home_writable
	// in ~/.config/warden/config.toml): Warden's own directories inside
	// still stay read-only.
	writeWardenConfig(t, home, `home_writable = [".config", ".local"]`+"\n")
	env := homeEnv(home)
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--",
		"sh", "-c", `mkdir -p .config/warden/rules && echo 'prefix_rule(pattern=["sh"], decision="allow")' > .config/warden/rules/x.rules`)
	// It may land inside for a moment; it is moved away and reported.
	undone := strings.Contains(errOut, "the sandbox removed .config/warden it created: protected path; kept at "+filepath.Join(home, ".local", "state", "warden", "quarantine"))
	if _, err := os.Stat(filepath.Join(home, ".config/warden/rules/x.rules")); err == nil || (code == 0 && !undone) {
		t.Errorf("attack: a rule written into Warden's config dir: exit %d %s", code, errOut)
	}
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--",
		"sh", "-c", `echo forged >> .local/state/warden/audit.log`)
	if code == 0 {
		t.Errorf("attack: the audit log written: %s", errOut)
	}
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--",
		"sh", "-c", `mkdir -p .config/other && echo x > .config/other/x.rules && echo y > .local/other.log`)
	if code != 0 {
		t.Errorf("twin: writing beside Warden's dirs failed: exit %d %s", code, errOut)
	}
	// Nothing else is left behind.
	if entries, _ := os.ReadDir(filepath.Join(home, ".config")); len(entries) != 2 || entries[0].Name() != "other" || entries[1].Name() != "warden" {
		t.Errorf(".config after the runs holds %v", entries)
	}
}

func TestProtectedConfigNeverUnderTmpdirWithoutHome(t *testing.T) {
	tmp, ws, state := t.TempDir(), t.TempDir(), t.TempDir()
	// A rules file where the old fallback ($TMPDIR/.config/warden) put the
	// config: any sandboxed command could have written it.
	planted := filepath.Join(tmp, ".config", "warden", "rules")
	os.MkdirAll(planted, 0o755)
	os.WriteFile(filepath.Join(planted, "x.rules"), []byte(`prefix_rule(pattern=["touch"], decision="forbidden", justification="planted")`+"\n"), 0o644)
	noHome := []string{"TMPDIR=" + tmp, "XDG_STATE_HOME=" + state}
	_, errOut, code := wardenIn(t, noHome, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "touch", "made")
	if strings.Contains(errOut, "planted") {
		t.Errorf("attack: with HOME unset, rules under $TMPDIR were loaded: exit %d %s", code, errOut)
	}
	if code != 0 && !strings.Contains(errOut, "HOME is not set") {
		t.Errorf("with HOME unset: exit %d %s", code, errOut)
	}
	// Twin: where the config dir really is (HOME=tmp), the same file is the
	// user's and applies.
	_, errOut, code = wardenIn(t, append(noHome, "HOME="+tmp), "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "touch", "made2")
	if code != exitRefused || !strings.Contains(errOut, "planted") {
		t.Errorf("twin: the user's own rules dir not loaded: exit %d %s", code, errOut)
	}
}

func TestProtectedAgentAndEditorConfig(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	env := isolated(home)
	for _, attack := range []string{
		`mkdir -p .claude && echo '{}' > .claude/settings.json`,
		`echo 'os.execute("id")' > .nvim.lua`,
		`mkdir -p .cursor/rules`,
		`echo '!id' > .exrc`,
	} {
		// It may run inside; what it made is moved away and reported.
		_, errOut, _ := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", attack)
		if !strings.Contains(errOut, " it created: protected path; kept at "+filepath.Join(home, "state", "warden", "quarantine")) {
			t.Errorf("attack %q not reported: %s", attack, errOut)
		}
	}
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", `echo '{}' > .prettierrc && echo x > .editorconfig`)
	if code != 0 {
		t.Errorf("twin: a normal dotfile: exit %d %s", code, errOut)
	}
	entries, _ := os.ReadDir(ws)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".editorconfig .prettierrc" {
		t.Errorf("workspace after the runs holds %v", names)
	}
}

func TestProtectedPatchToWardenConfigAsks(t *testing.T) {
	home := t.TempDir()
	// The user lets ~/.config be written (home_writable): Warden's config
	// dir inside still asks.
	writeWardenConfig(t, home, `home_writable = [".config"]`+"\n")
	env := homeEnv(home)
	patch := func(path string) string {
		return "*** Begin Patch\n*** Add File: " + path + "\n+prefix_rule(pattern=[\"sh\"], decision=\"allow\")\n*** End Patch\n"
	}
	patchFile := filepath.Join(t.TempDir(), "p")
	os.WriteFile(patchFile, []byte(patch(".config/warden/rules/x.rules")), 0o644)
	_, errOut, code := wardenIn(t, env, "apply-patch", "--cwd", home, patchFile)
	if _, err := os.Stat(filepath.Join(home, ".config/warden/rules/x.rules")); code == 0 || err == nil || !strings.Contains(errOut, "need approval") {
		t.Errorf("attack: a patch into Warden's config dir applied without asking: exit %d %s", code, errOut)
	}
	os.WriteFile(patchFile, []byte(patch(".config/other/x.rules")), 0o644)
	_, errOut, code = wardenIn(t, env, "apply-patch", "--cwd", home, patchFile)
	if code != 0 {
		t.Errorf("twin: a patch beside it: exit %d %s", code, errOut)
	}
}
