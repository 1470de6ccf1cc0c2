package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netHome is a home whose config.toml says body (none when empty).
func netHome(t *testing.T, body string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	if body != "" {
		os.MkdirAll(filepath.Join(home, "config", "warden"), 0o700)
		if err := os.WriteFile(filepath.Join(home, "config", "warden", "config.toml"), []byte(body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

const netProbe = `if [ -n "$WARDEN_SANDBOX_NETWORK_DISABLED" ]; then echo net=off; else echo net=reachable; fi; echo "proxy=$http_proxy"`

func TestExecNetworkFlagModes(t *testing.T) {
	home := netHome(t, "")
	ws := t.TempDir()
	for _, c := range []struct {
		flag, want string
	}{
		{"--network=off", "net=off\nproxy=\n"},
		{"--network", "net=reachable\nproxy=\n"},
		{"--network=on", "net=reachable\nproxy=\n"},
		{"--network=true", "net=reachable\nproxy=\n"},
	} {
		stdout, stderr, code := runWardenEnv(t, home, "", "exec", "--cwd", ws, "--yes", c.flag, "--", "sh", "-c", netProbe)
		if code != 0 || stdout != c.want {
			t.Errorf("%s: exit %d, stdout %q, want %q; stderr %s", c.flag, code, stdout, c.want, stderr)
		}
	}
	// Under ask the command's only way out is Warden's proxy.
	stdout, stderr, code := runWardenEnv(t, home, "", "exec", "--cwd", ws, "--yes", "--network=ask", "--", "sh", "-c", netProbe)
	if code != 0 || stdout != "net=reachable\nproxy=http://127.0.0.1:3128\n" {
		t.Errorf("--network=ask: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	_, stderr, code = runWardenEnv(t, home, "", "exec", "--cwd", ws, "--yes", "--network=maybe", "--", "true")
	if code != 2 || !strings.Contains(stderr, `invalid value "maybe" for flag -network: want off, ask or on`) || strings.Contains(stderr, "boolean") {
		t.Errorf("--network=maybe: exit %d, stderr %s", code, stderr)
	}
}

func TestExecNetworkFromConfig(t *testing.T) {
	ws := t.TempDir()
	for body, want := range map[string]string{
		"":                          "net=reachable\nproxy=http://127.0.0.1:3128\n", // the default: ask
		`network_access = true`:     "net=reachable\n",
		`network_access = "off"`:    "net=off\n",
		`network_access = "on"`:     "net=reachable\n",
		`network_access = false`:    "net=off\n",
		`network_access = "ask"`:    "net=reachable\nproxy=http://127.0.0.1:3128\n",
		`network_access = "always"`: "",
	} {
		home := netHome(t, body)
		stdout, stderr, code := runWardenEnv(t, home, "", "exec", "--cwd", ws, "--yes", "--", "sh", "-c", netProbe)
		switch {
		case strings.Contains(body, "always"):
			if code != 2 || !strings.Contains(stderr, "network_access") {
				t.Errorf("%s: exit %d, stderr %s; want a config error naming network_access", body, code, stderr)
			}
		default:
			if code != 0 || !strings.HasPrefix(stdout, want) {
				t.Errorf("%q: exit %d stdout %q, want %q; stderr %s", body, code, stdout, want, stderr)
			}
		}
	}
	// The flag overrides the file, both ways.
	home := netHome(t, `network_access = "ask"`)
	if stdout, stderr, code := runWardenEnv(t, home, "", "exec", "--cwd", ws, "--yes", "--network=off", "--", "sh", "-c", netProbe); code != 0 || !strings.HasPrefix(stdout, "net=off") {
		t.Errorf("--network=off over ask: exit %d %q %s", code, stdout, stderr)
	}
}

func TestDoctorReportsNetworkMode(t *testing.T) {
	for body, want := range map[string]string{"": "ask", `network_access = "off"`: "off", `network_access = true`: "on"} {
		home := netHome(t, body)
		stdout, stderr, code := runWardenEnv(t, home, "", "doctor", "--json")
		if code != 0 {
			t.Fatalf("doctor: exit %d: %s", code, stderr)
		}
		var rep doctorReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Network.Mode != want || len(rep.Network.Enforced) == 0 || len(rep.Network.Modes) != 3 {
			t.Errorf("%q: network %+v, want mode %s", body, rep.Network, want)
		}
		if want == "ask" && rep.Sandbox.Mechanism == "linux" && !strings.Contains(strings.Join(rep.Network.Enforced, "\n"), "127.0.0.1:3128") {
			t.Errorf("ask: enforcement does not name the forwarder: %q", rep.Network.Enforced)
		}
		text, _, _ := runWardenEnv(t, home, "", "doctor")
		if !strings.Contains(text, "network (network_access in config.toml, --network): "+want) {
			t.Errorf("%q: doctor text lacks the network mode:\n%s", body, text)
		}
	}
}

func TestPolicyCheckTakesNetworkMode(t *testing.T) {
	home := netHome(t, "")
	for _, flag := range []string{"--network", "--network=ask", "--network=off"} {
		stdout, stderr, code := runWardenEnv(t, home, "", "policy", "check", flag, "--json", "--", "ls")
		if code != 0 || !strings.Contains(stdout, `"decision"`) {
			t.Errorf("policy check %s: exit %d %s %s", flag, code, stdout, stderr)
		}
	}
	if _, stderr, code := runWardenEnv(t, home, "", "policy", "check", "--network=wide", "--json", "--", "ls"); code != 2 || !strings.Contains(stderr, "want off, ask or on") {
		t.Errorf("policy check --network=wide: exit %d %s", code, stderr)
	}
}
