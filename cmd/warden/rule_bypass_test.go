package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
)

// ruleBypassFixture is a workspace under an allow rule for `cat` (and `git
// status`) that carries a write grant, holding programs that leave a marker
// outside every writable root when they run: ./bin/cat, ./x.so (an
// LD_PRELOAD library) and ./bin/fsmonitor (a git hook). A rule never lets
// them run on the host, and gives its grant only to what it names.
type ruleBypassFixture struct {
	ws, rules, home, marker string
}

func newRuleBypassFixture(t *testing.T) ruleBypassFixture {
	t.Helper()
	outside := dirOutsideWritableRoots(t)
	f := ruleBypassFixture{ws: t.TempDir(), home: outside, marker: filepath.Join(outside, "pwned")}
	os.WriteFile(filepath.Join(f.ws, "f"), []byte("hello\n"), 0o644)
	os.MkdirAll(filepath.Join(f.ws, "bin"), 0o755)
	evil := fmt.Sprintf("#!/bin/sh\ntouch %s\necho evil\n", f.marker)
	os.WriteFile(filepath.Join(f.ws, "bin", "cat"), []byte(evil), 0o755)
	os.WriteFile(filepath.Join(f.ws, "bin", "fsmonitor"), []byte(evil), 0o755)
	granted := filepath.Join(outside, "granted")
	os.Mkdir(granted, 0o755)
	f.rules = filepath.Join(outside, "team.rules")
	os.WriteFile(f.rules, []byte(`prefix_rule(pattern=["cat"], decision="allow", additional_permissions={"write": ["`+granted+`"]})
prefix_rule(pattern=["git", "status"], decision="allow", additional_permissions={"write": ["`+granted+`"]})
`), 0o644)
	return f
}

// warden runs the binary with HOME and Warden's own state outside the
// writable roots, and extra environment variables.
func (f ruleBypassFixture) warden(t *testing.T, state string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(wardenBin(t), args...)
	cmd.Env = append(os.Environ(),
		"HOME="+f.home,
		"XDG_CONFIG_HOME="+filepath.Join(f.home, "config"),
		"XDG_STATE_HOME="+filepath.Join(f.home, state))
	cmd.Env = append(cmd.Env, env...)
	return runCmd(t, cmd)
}

// runsOutside reads the audit log of one exec: whether any attempt ran
// outside the sandbox, and whether any ran at all.
func runsOutside(t *testing.T, stateHome string) (outside, ran bool) {
	t.Helper()
	file, err := os.Open(filepath.Join(stateHome, "warden", approvals.AuditFile))
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var ev approvals.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.Event == "run" && ev.Sandboxed != nil {
			ran = true
			outside = outside || !*ev.Sandboxed
		}
	}
	return outside, ran
}

type ruleBypassCase struct {
	name   string
	argv   []string
	env    []string
	bypass bool   // twins: the rule applies, with its grant (in the sandbox)
	out    string // twins: what they print
	why    string // attacks: part of the reason the rule was set aside
}

func (f ruleBypassFixture) check(t *testing.T, i int, c ruleBypassCase) {
	t.Helper()
	os.Remove(f.marker)
	stdout, stderr, code := f.warden(t, fmt.Sprintf("state%d", i), c.env, append([]string{"policy", "check", "--rules", f.rules, "--cwd", f.ws, "--json", "--"}, c.argv...)...)
	var p policyJSON
	if err := json.Unmarshal([]byte(stdout), &p); code != 0 || err != nil {
		t.Fatalf("%s: policy check exit %d (%v): %s%s", c.name, code, err, stdout, stderr)
	}
	if p.BypassSandbox {
		t.Errorf("%s: policy check bypass_sandbox true (%s)", c.name, p.Reason)
	}
	if c.bypass && !strings.Contains(p.Reason, "in the sandbox with write access to") {
		t.Errorf("%s: reason %q does not give the rule's grant", c.name, p.Reason)
	}
	if !c.bypass && (!strings.Contains(p.Reason, "allow rule not applied: rule "+f.rules) || !strings.Contains(p.Reason, c.why)) {
		t.Errorf("%s: reason %q does not say the rule was set aside because %q", c.name, p.Reason, c.why)
	}
	if len(p.MatchedRules) == 0 {
		t.Errorf("%s: matched_rules is empty", c.name)
	}

	state := filepath.Join(f.home, fmt.Sprintf("exec%d", i))
	stdout, stderr, code = f.warden(t, fmt.Sprintf("exec%d", i), c.env, append([]string{"exec", "--rules", f.rules, "--cwd", f.ws, "--approval", "on-request", "--deny", "--"}, c.argv...)...)
	outside, ran := runsOutside(t, state)
	if _, err := os.Stat(f.marker); err == nil {
		t.Errorf("%s: the workspace's program ran on the host (marker written); exit %d, %s", c.name, code, stderr)
	}
	if c.bypass {
		if code != 0 || stdout != c.out || outside || !ran {
			t.Errorf("%s: exit %d, stdout %q (want %q), ran outside the sandbox %v; stderr %s", c.name, code, stdout, c.out, outside, stderr)
		}
		return
	}
	if outside {
		t.Errorf("%s: ran outside the sandbox; exit %d, stderr %s", c.name, code, stderr)
	}
	if !ran && code != 77 {
		t.Errorf("%s: neither ran sandboxed nor was refused: exit %d, %s", c.name, code, stderr)
	}
}

// TestRuleBypassThroughTheBinary: with `cat` allowed by a rule that carries
// a grant, commands that smuggle a workspace program or a redirection past
// the rule run sandboxed without the grant (the marker outside the
// workspace is never written), and `warden policy check` says why the rule
// was set aside; their plain twins get the grant and print the file. None
// of them leaves the sandbox.
func TestRuleBypassThroughTheBinary(t *testing.T) {
	f := newRuleBypassFixture(t)
	sh := func(s string) []string { return []string{"bash", "-lc", s} }
	hostPath := os.Getenv("PATH")
	cases := []ruleBypassCase{
		// Twins.
		{name: "cat f", argv: []string{"cat", "f"}, bypass: true, out: "hello\n"},
		{name: "script cat f", argv: sh("cat f"), bypass: true, out: "hello\n"},
		{name: "cat f 2>/dev/null", argv: sh("cat f 2>/dev/null"), bypass: true, out: "hello\n"},
		{name: "cat f && cat 'f'", argv: sh("cat f && cat 'f' 2>&1"), bypass: true, out: "hello\nhello\n"},
		// Attacks.
		{name: "PATH prefix", argv: sh("PATH=./bin:$PATH cat f"), why: "sets PATH"},
		{name: "nested PATH prefix", argv: sh(`bash -lc "PATH=./bin:\$PATH cat f"`), why: "sets PATH"},
		{name: "program by absolute path", argv: []string{filepath.Join(f.ws, "bin", "cat"), "f"}, why: "inside the writable root"},
		{name: "program by absolute path in a script", argv: sh(filepath.Join(f.ws, "bin", "cat") + " f"), why: "inside the writable root"},
		{name: "PATH lookup into the workspace", argv: []string{"cat", "f"}, env: []string{"PATH=" + filepath.Join(f.ws, "bin") + ":" + hostPath}, why: "inside the writable root"},
		{name: "redirection outside", argv: sh("cat f > " + f.marker), why: "redirects > " + f.marker},
		{name: "let subscript", argv: sh("let 'a[$(./bin/cat)]'; cat f"), why: "let"},
		{name: "git config from the environment", argv: sh("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./bin/fsmonitor git status"), why: "sets GIT_CONFIG_COUNT"},
	}
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if cc, err := exec.LookPath("cc"); err == nil {
		src := filepath.Join(f.ws, "x.c")
		os.WriteFile(src, []byte(fmt.Sprintf(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void) { close(open(%q, O_CREAT | O_WRONLY, 0644)); }
`, f.marker)), 0o644)
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(f.ws, "x.so"), src).CombinedOutput(); err != nil {
			t.Fatalf("build x.so: %v %s", err, out)
		}
		cases = append(cases, ruleBypassCase{name: "LD_PRELOAD prefix", argv: sh("LD_PRELOAD=./x.so cat f"), why: "sets LD_PRELOAD"})
	} else {
		t.Log("no C compiler: the LD_PRELOAD attack is left out")
	}
	for i, c := range cases {
		f.check(t, i, c)
	}
}
