package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyCheckRules runs `warden policy check --json --approval untrusted`
// with the given --rules files and returns the decision JSON, stderr and
// the exit status.
func policyCheckRules(t *testing.T, home string, rules []string, argv ...string) (policyJSON, string, int) {
	t.Helper()
	args := []string{"policy", "check", "--json", "--approval", "untrusted", "--cwd", home}
	for _, r := range rules {
		args = append(args, "--rules", r)
	}
	out, errOut, code := runWardenEnv(t, home, "", append(append(args, "--"), argv...)...)
	var p policyJSON
	if code == 0 || code == exitRulesBroken {
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	return p, errOut, code
}

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRulesCodexPolicyCheckHostExecutable: through the binary, the last
// host_executable wins across --rules files, paths=[] takes a program named
// by a path off its basename's rules, and a bad path fails the load with
// file:line.
func TestRulesCodexPolicyCheckHostExecutable(t *testing.T) {
	home := t.TempDir()
	base := writeFile(t, filepath.Join(home, "base.rules"), `prefix_rule(pattern=["git", "push"], decision="forbidden", justification="no pushing")
host_executable(name="git", paths=["/opt/x/git"])
`)
	later := writeFile(t, filepath.Join(home, "later.rules"), `host_executable(name="git", paths=["/usr/bin/git"])`+"\n")
	cases := []struct {
		rules    []string
		argv     []string
		decision string
		matched  int
	}{
		{[]string{base}, []string{"/opt/x/git", "push"}, "forbidden", 1},
		{[]string{base}, []string{"/usr/bin/git", "push"}, "prompt", 0},
		{[]string{base, later}, []string{"/opt/x/git", "push"}, "prompt", 0},      // last definition wins
		{[]string{base, later}, []string{"/usr/bin/git", "push"}, "forbidden", 1}, // twin
		{[]string{base, later}, []string{"git", "push"}, "forbidden", 1},
	}
	for _, c := range cases {
		p, errOut, code := policyCheckRules(t, home, c.rules, c.argv...)
		if code != 0 || errOut != "" || p.Decision != c.decision || len(p.MatchedRules) != c.matched {
			t.Errorf("%v with %d files: exit %d, decision %q, %d rules matched; want %q, %d\n%s", c.argv, len(c.rules), code, p.Decision, len(p.MatchedRules), c.decision, c.matched, errOut)
		}
	}

	off := writeFile(t, filepath.Join(home, "off.rules"), `prefix_rule(pattern=["git", "push"], decision="forbidden")
host_executable(name="git", paths=[])
`)
	if p, _, _ := policyCheckRules(t, home, []string{off}, "/usr/bin/git", "push"); len(p.MatchedRules) != 0 {
		t.Errorf("paths=[]: /usr/bin/git push matched %v", p.MatchedRules)
	}
	if p, _, _ := policyCheckRules(t, home, []string{off}, "git", "push"); p.Decision != "forbidden" {
		t.Errorf("paths=[]: git push = %q, want forbidden", p.Decision)
	}

	bad := writeFile(t, filepath.Join(home, "bad.rules"), "prefix_rule(pattern=[\"git\"])\nhost_executable(name=\"git\", paths=[\"/usr/bin/hub\"])\n")
	p, errOut, code := policyCheckRules(t, home, []string{bad}, "git", "fetch", "--all")
	if code != exitRulesBroken || !strings.Contains(errOut, bad+":2") || !strings.Contains(errOut, `must end in "git"`) || p.Decision != "prompt" {
		t.Errorf("bad host_executable path: exit %d, decision %q, stderr %q", code, p.Decision, errOut)
	}
}

// TestRulesCodexPolicyCheckNetworkRule: Codex's network_rule spellings load
// cleanly; an unknown protocol fails the load with file:line.
func TestRulesCodexPolicyCheckNetworkRule(t *testing.T) {
	home := t.TempDir()
	good := writeFile(t, filepath.Join(home, "net.rules"), `prefix_rule(pattern=["make"], decision="forbidden")
network_rule(host="pypi.org", protocol="https", decision="allow")
network_rule(host="evil.example", protocol="https_connect", decision="deny", justification="exfiltration")
network_rule(host="proxy.example:1080", protocol="socks5_tcp", decision="prompt")
network_rule(host="dns.example", protocol="socks5_udp", decision="deny")
network_rule(host="old.example", protocol="http-connect", decision="forbidden")
network_rule(host="plain.example", protocol="http", decision="allow")
`)
	p, errOut, code := policyCheckRules(t, home, []string{good}, "make")
	if code != 0 || errOut != "" || p.Decision != "forbidden" {
		t.Errorf("Codex network rules: exit %d, decision %q (the file's prefix rule must apply), stderr %q", code, p.Decision, errOut)
	}
	bad := writeFile(t, filepath.Join(home, "badnet.rules"), "prefix_rule(pattern=[\"make\"], decision=\"forbidden\")\nnetwork_rule(host=\"x.example\", protocol=\"gopher\", decision=\"deny\")\n")
	p, errOut, code = policyCheckRules(t, home, []string{bad}, "make")
	if code != exitRulesBroken || !strings.Contains(errOut, bad+":2: network_rule protocol \"gopher\"") || p.Decision != "prompt" {
		t.Errorf("bad protocol: exit %d, decision %q, stderr %q", code, p.Decision, errOut)
	}
}

// TestRulesCodexPolicyCheckRulesPaths: a codex_rules_dir that is a file is
// an error naming it; --rules DIR loads the directory's *.rules files and an
// empty one is an error; a missing --rules path is a usage error.
func TestRulesCodexPolicyCheckRulesPaths(t *testing.T) {
	home := t.TempDir()
	asFile := writeFile(t, filepath.Join(home, "codex", "rules"), `prefix_rule(pattern=["make"], decision="forbidden")`+"\n")
	writeFile(t, filepath.Join(home, "config", "warden", "config.toml"), "codex_rules_dir = \""+asFile+"\"\n")
	p, errOut, code := policyCheckRules(t, home, nil, "make")
	if code != exitRulesBroken || !strings.Contains(errOut, asFile+" is a file, not a directory") || p.Decision != "prompt" {
		t.Errorf("codex_rules_dir is a file: exit %d, decision %q, stderr %q", code, p.Decision, errOut)
	}

	home = t.TempDir()
	dir := filepath.Join(home, "myrules")
	writeFile(t, filepath.Join(dir, "a.rules"), `prefix_rule(pattern=["make"], decision="forbidden")`+"\n")
	p, errOut, code = policyCheckRules(t, home, []string{dir}, "make")
	if code != 0 || errOut != "" || p.Decision != "forbidden" {
		t.Errorf("--rules DIR: exit %d, decision %q, stderr %q", code, p.Decision, errOut)
	}
	empty := filepath.Join(home, "empty")
	os.MkdirAll(empty, 0o755)
	_, errOut, _ = policyCheckRules(t, home, []string{empty}, "make")
	if !strings.Contains(errOut, empty+" holds no *.rules file") {
		t.Errorf("--rules EMPTY-DIR: stderr %q", errOut)
	}
	_, errOut, code = policyCheckRules(t, home, []string{filepath.Join(home, "nope.rules")}, "make")
	if code != exitUsage || !strings.Contains(errOut, "nope.rules") {
		t.Errorf("--rules MISSING: exit %d, stderr %q", code, errOut)
	}
}

// TestPromptEscapeRulesErrorFileName: a workspace can ship a rules file
// whose name holds terminal escapes; the load error names it escaped.
func TestPromptEscapeRulesErrorFileName(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	name := "\x1b[2J\x1b[Hok.rules"
	writeFile(t, filepath.Join(ws, ".warden", "rules", name), "prefix_rule(pattern=[\"make\"], decision=\"maybe\")\n")
	_, errOut, code := runWardenEnv(t, home, "", "policy", "check", "--json", "--cwd", ws, "--", "make")
	if code != exitRulesBroken || !strings.Contains(errOut, `\x1b[2J\x1b[Hok.rules:1`) || strings.Contains(errOut, "\x1b") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
