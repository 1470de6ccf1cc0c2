package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHome makes a home directory with an AWS key, a shell config and a
// config directory for Warden, and points HOME and XDG_CONFIG_HOME at it.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for rel, content := range map[string]string{
		".aws/credentials": "[default]\naws_secret_access_key = AKIA-SECRET\n",
		".bashrc":          "export EDITOR=vi\n",
		"notes/plain.txt":  "plain\n",
	} {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local/state"))
	return home
}

func writeWardenConfig(t *testing.T, home, body string) {
	t.Helper()
	p := filepath.Join(home, ".config/warden/config.toml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadPolicyExecHidesCredentials drives the real binary: the default
// read policy hides ~/.aws and names the blocked read; ~/.bashrc stays
// readable; --read-access full and --read-allow show the key again.
func TestReadPolicyExecHidesCredentials(t *testing.T) {
	home := fakeHome(t)
	ws := t.TempDir()
	// A read of credentials asks first (issue 15): --yes approves it, so
	// what stops it is the sandbox.
	stdout, stderr, code := runWarden(t, "exec", "--yes", "--cwd", ws, "--", "cat", filepath.Join(home, ".aws/credentials"))
	if code == 0 || strings.Contains(stdout+stderr, "AKIA-SECRET") {
		t.Fatalf("the key was read: exit %d %q %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "read of ~/.aws/credentials denied by the sandbox's read policy") {
		t.Errorf("the denial does not name the read: %s", stderr)
	}
	if stdout, stderr, code := runWarden(t, "exec", "--cwd", ws, "--", "cat", filepath.Join(home, ".bashrc")); code != 0 || stdout != "export EDITOR=vi\n" {
		t.Errorf("twin ~/.bashrc: exit %d %q %s", code, stdout, stderr)
	}
	for _, flags := range [][]string{{"--read-access", "full"}, {"--read-allow", "~/.aws/credentials"}} {
		args := append(append([]string{"exec", "--yes", "--cwd", ws}, flags...), "--", "cat", filepath.Join(home, ".aws/credentials"))
		if stdout, stderr, code := runWarden(t, args...); code != 0 || !strings.Contains(stdout, "AKIA-SECRET") {
			t.Errorf("%v: exit %d %q %s", flags, code, stdout, stderr)
		}
	}
	// Restricted: the home's ordinary files are out of reach too, but for
	// --readable-root; ~/.bashrc stays readable. (Read-only: the test's
	// home lies in /tmp, a writable root of workspace-write.)
	if stdout, _, code := runWarden(t, "exec", "--sandbox", "read-only", "--read-access", "restricted", "--cwd", ws, "--", "cat", filepath.Join(home, "notes/plain.txt")); code == 0 || stdout != "" {
		t.Errorf("restricted read an ordinary home file: exit %d %q", code, stdout)
	}
	if stdout, stderr, code := runWarden(t, "exec", "--sandbox", "read-only", "--read-access", "restricted", "--readable-root", "~/notes", "--cwd", ws, "--", "sh", "-c", `cat "$HOME/notes/plain.txt" "$HOME/.bashrc"`); code != 0 || stdout != "plain\nexport EDITOR=vi\n" {
		t.Errorf("restricted with --readable-root: exit %d %q %s", code, stdout, stderr)
	}
	if _, stderr, code := runWarden(t, "exec", "--read-access", "bogus", "--cwd", ws, "--", "true"); code != 2 || !strings.Contains(stderr, "bogus") {
		t.Errorf("bogus read access: exit %d %s", code, stderr)
	}
}

// TestReadPolicyConfig: read_deny and read_access come from config.toml,
// and config.toml itself is hidden once it holds an API key.
func TestReadPolicyConfig(t *testing.T) {
	home := fakeHome(t)
	ws := t.TempDir()
	cfgFile := filepath.Join(home, ".config/warden/config.toml")
	writeWardenConfig(t, home, "read_deny = [\"~/notes\"]\n")
	if stdout, _, code := runWarden(t, "exec", "--cwd", ws, "--", "cat", filepath.Join(home, "notes/plain.txt")); code == 0 || strings.Contains(stdout, "plain") {
		t.Errorf("read_deny ignored: exit %d %q", code, stdout)
	}
	// Twin: without a key the config file is readable.
	if stdout, stderr, code := runWarden(t, "exec", "--cwd", ws, "--", "cat", cfgFile); code != 0 || !strings.Contains(stdout, "read_deny") {
		t.Errorf("config.toml without a key: exit %d %q %s", code, stdout, stderr)
	}
	writeWardenConfig(t, home, "[model]\nname = \"m\"\napi_key = \"sk-config-key\"\n")
	if stdout, stderr, code := runWarden(t, "exec", "--cwd", ws, "--", "cat", cfgFile); stdout != "" || strings.Contains(stdout+stderr, "sk-config-key") {
		t.Errorf("config.toml with a key read: exit %d %q %s", code, stdout, stderr)
	}
	writeWardenConfig(t, home, "read_access = \"full\"\n")
	if stdout, stderr, code := runWarden(t, "exec", "--yes", "--cwd", ws, "--", "cat", filepath.Join(home, ".aws/credentials")); code != 0 || !strings.Contains(stdout, "AKIA-SECRET") {
		t.Errorf("read_access = full: exit %d %q %s", code, stdout, stderr)
	}
	writeWardenConfig(t, home, "read_deny = [\"relative/path\"]\n")
	if _, stderr, code := runWarden(t, "exec", "--cwd", ws, "--", "true"); code == 0 || !strings.Contains(stderr, "read_deny") {
		t.Errorf("a relative read_deny loaded: exit %d %s", code, stderr)
	}
}

// TestReadPolicyDoctorAndPolicyCheck: doctor lists the read policy, what it
// hides and how; policy check shows it.
func TestReadPolicyDoctorAndPolicyCheck(t *testing.T) {
	fakeHome(t)
	stdout, _, code := runWarden(t, "doctor")
	if code != 0 || !strings.Contains(stdout, `reads: read_access = "deny-secrets"`) || !strings.Contains(stdout, "present now, so hidden: ~/.aws") ||
		!strings.Contains(stdout, "~/.ssh") {
		t.Errorf("doctor: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = runWarden(t, "policy", "check", "--read-access", "full", "--", "cat", "x")
	if !strings.Contains(stdout, "reads:     reads everything") {
		t.Errorf("policy check --read-access full:\n%s", stdout)
	}
}
