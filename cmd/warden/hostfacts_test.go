package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyCheckNamesCodeHosts: github.com is a code host, not "a known
// package registry", and the repository's remote when it is; pypi.org
// (the twin) stays a package registry.
func TestPolicyCheckNamesCodeHosts(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	writeFile(t, filepath.Join(ws, ".git", "config"), "[remote \"origin\"]\n\turl = https://github.com/x/y.git\n")
	other := filepath.Join(home, "other")
	writeFile(t, filepath.Join(other, "README.md"), "x\n")
	cases := []struct {
		cwd       string
		argv      []string
		fact, net string
	}{
		{ws, []string{"git", "push"}, "contacts github.com (GitHub, a code host, this repository's own remote)",
			"github.com is GitHub, a code host, and hosts this repository's own git remote"},
		{other, []string{"curl", "-o", "a.tgz", "https://github.com/x/y/archive/main.tar.gz"}, "contacts github.com (GitHub, a code host)",
			"github.com is GitHub, a code host"},
		{other, []string{"curl", "-o", "a.whl", "https://pypi.org/simple/x"}, "contacts pypi.org (PyPI, the Python Package Index, a known package registry)",
			"pypi.org is PyPI, the Python Package Index, a known package registry"},
	}
	for _, c := range cases {
		args := append([]string{"policy", "check", "--json", "--cwd", c.cwd, "--"}, c.argv...)
		out, errOut, code := runWardenEnv(t, home, "", args...)
		var p policyJSON
		var n networkJSON
		if code != 0 || json.Unmarshal([]byte(out), &p) != nil || json.Unmarshal([]byte(out), &n) != nil || len(n.Network) != 1 {
			t.Fatalf("%q: exit %d %s %s", c.argv, code, out, errOut)
		}
		facts, netFacts := strings.Join(p.Risk.Facts, "\n"), strings.Join(n.Network[0].Facts, "\n")
		if !strings.Contains(facts, c.fact) || !strings.Contains(netFacts, c.net) {
			t.Errorf("%q: facts %q, network facts %q; want %q and %q", c.argv, facts, netFacts, c.fact, c.net)
		}
		if strings.Contains(c.argv[len(c.argv)-1], "github") && strings.Contains(facts+netFacts, "package registry") {
			t.Errorf("%q: github.com called a package registry: %q %q", c.argv, facts, netFacts)
		}
	}
}
