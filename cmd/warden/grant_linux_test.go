package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// grantEnv is a user's world for the grant tests: a home with a credential
// store, a workspace in it, XDG directories, and a directory A outside the
// writable roots (and outside /tmp, which workspace-write includes).
type grantEnv struct {
	home, ws, a, secret string
	env                 []string
}

func newGrantEnv(t *testing.T) grantEnv {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(dirOutsideWritableRoots(t))
	if err != nil {
		t.Fatal(err)
	}
	g := grantEnv{home: home, ws: filepath.Join(home, "ws"), a: filepath.Join(outside, "A"), secret: filepath.Join(home, ".ssh", "id_deploy")}
	for _, d := range []string{g.ws, g.a, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{g.secret, filepath.Join(home, ".ssh", "id_other")} {
		if err := os.WriteFile(f, []byte("SECRET-"+filepath.Base(f)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	return g
}

func (g grantEnv) warden(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(wardenBin(t), args...)
	cmd.Env = g.env
	return runCmd(t, cmd)
}

// script puts an executable script in the workspace: its writes are hidden
// from the static analysis, as a build script's are.
func (g grantEnv) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(g.ws, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExecGrantWrite: --grant-write asks; approved, the write lands
// sandboxed; denied or under never nothing runs; the grant opens neither
// A's parent nor A/.git, and a network grant is refused for now.
func TestExecGrantWrite(t *testing.T) {
	g := newGrantEnv(t)
	_, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--yes", "--", "sh", "-c", "echo hi > "+g.a+"/f")
	if code != 0 || !strings.Contains(stderr, "in the sandbox with write access to "+g.a+"?") || !strings.Contains(stderr, "ran in the sandbox with write access to "+g.a) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(g.a, "f")); string(b) != "hi\n" {
		t.Fatalf("the granted write did not land: %q", b)
	}
	// Denied: nothing runs.
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--deny", "--", "touch", g.a+"/denied")
	if code != exitRefused || exists(filepath.Join(g.a, "denied")) {
		t.Errorf("denied: exit %d\n%s", code, stderr)
	}
	// never: refused without asking.
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "never", "--grant-write", g.a, "--yes", "--", "touch", g.a+"/never")
	if code != exitRefused || exists(filepath.Join(g.a, "never")) || !strings.Contains(stderr, "approval policy is never") {
		t.Errorf("never: exit %d\n%s", code, stderr)
	}
	// Escapes, each approved by the user: the parent, A/.git.
	parent := filepath.Dir(g.a)
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--yes", "--", "sh", "-c", "echo x > "+g.a+"/../escaped")
	if code == 0 || exists(filepath.Join(parent, "escaped")) {
		t.Errorf("a grant for A wrote its parent: exit %d\n%s", code, stderr)
	}
	os.MkdirAll(filepath.Join(g.a, ".git"), 0o755)
	// A/.git holds no config: the command may create one in its own view,
	// but it is moved to the quarantine as it appears and reported.
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--yes", "--", "sh", "-c", "echo x > "+g.a+"/.git/config")
	if exists(filepath.Join(g.a, ".git", "config")) || !strings.Contains(stderr, ".git/config it created") {
		t.Errorf("a grant for A left A/.git/config: exit %d\n%s", code, stderr)
	}
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a+"/.git", "--yes", "--", "true")
	if code != exitRefused || !strings.Contains(stderr, "protected .git") {
		t.Errorf("a grant naming A/.git: exit %d\n%s", code, stderr)
	}
	_, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--network=off", "--grant-network", "pypi.org:443", "--yes", "--", "true")
	if code != exitRefused || !strings.Contains(stderr, `network grants need network_access = "ask"`) {
		t.Errorf("network grant: exit %d\n%s", code, stderr)
	}
}

// TestExecGrantRead: --grant-read of one secret reads it, not its sibling.
func TestExecGrantRead(t *testing.T) {
	g := newGrantEnv(t)
	stdout, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-read", "~/.ssh/id_deploy", "--yes", "--", "cat", g.secret)
	if code != 0 || !strings.Contains(stdout, "SECRET-id_deploy") || !strings.Contains(stderr, "Actions: Deny | Allow once") {
		t.Fatalf("granted read: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-read", "~/.ssh/id_deploy", "--yes", "--", "cat", filepath.Join(g.home, ".ssh", "id_other"))
	if code == 0 || strings.Contains(stdout, "SECRET") {
		t.Errorf("a grant for id_deploy read id_other: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The twin without a grant: hidden.
	stdout, _, code = g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--yes", "--", "cat", g.secret)
	if code == 0 || strings.Contains(stdout, "SECRET") {
		t.Errorf("read without a grant: exit %d %s", code, stdout)
	}
}

// TestExecRetryWithDerivedGrant: a build script's blocked write and hidden
// read are retried in the sandbox with exactly the grant the denial names
// (--yes is Allow once, which is that sandboxed retry, never the run
// without the sandbox).
func TestExecRetryWithDerivedGrant(t *testing.T) {
	g := newGrantEnv(t)
	build := g.script(t, "build.sh", `touch "`+g.a+`/built"`)
	_, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--yes", "--", build)
	if code != 0 || !exists(filepath.Join(g.a, "built")) || !strings.Contains(stderr, "Retry it in the sandbox with write access to "+g.a+"?") ||
		!strings.Contains(stderr, "Actions: Allow once | Allow for session | Run without sandbox | Deny | Deny and stop") ||
		!strings.Contains(stderr, "ran in the sandbox with write access to "+g.a) {
		t.Fatalf("write retry: exit %d\n%s", code, stderr)
	}
	show := g.script(t, "show.sh", `cat "`+g.secret+`"`)
	stdout, stderr, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--yes", "--", show)
	if code != 0 || !strings.Contains(stdout, "SECRET-id_deploy") || !strings.Contains(stderr, "Retry it in the sandbox with read access to ~/.ssh/id_deploy?") ||
		!strings.Contains(stderr, "Actions: Deny | Allow once | Run without sandbox | Deny and stop") {
		t.Fatalf("read retry: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// --deny: the blocked write stays blocked.
	build2 := g.script(t, "build2.sh", `touch "`+g.a+`/denied"`)
	if _, _, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-failure", "--deny", "--", build2); code == 0 || exists(filepath.Join(g.a, "denied")) {
		t.Errorf("denied retry: exit %d", code)
	}
}

// TestExecGrantTerminalAlwaysAllow: on the terminal, Always allow for a
// request with a grant saves the rule with it; the next run (no flag, no
// answer possible) runs sandboxed with the grant without a prompt, and
// still cannot write outside it.
func TestExecGrantTerminalAlwaysAllow(t *testing.T) {
	g := newGrantEnv(t)
	// Always allow is offered for a prefix that lasts: a directory with a
	// plain name beside the checkout's tests, not in a temporary directory.
	parent := filepath.Dir(filepath.Dir(g.a))
	if parent == "/var/tmp" {
		t.Skip("the checkout is in a temporary directory: no path here lasts for Always allow")
	}
	g.a = filepath.Join(parent, ".warden-always-allow-"+plainName(os.Getpid()))
	if err := os.Mkdir(g.a, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(g.a) })
	master, slave := openPTY(t)
	cmd := exec.Command(wardenBin(t), "exec", "--cwd", g.ws, "--approval", "on-request", "--grant-write", g.a, "--", "touch", g.a+"/kept")
	cmd.Env = g.env
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = slave, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	master.Write([]byte("3\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "3) Always allow `touch "+g.a+"/kept`") || !exists(filepath.Join(g.a, "kept")) {
		t.Fatalf("prompt or run:\n%s", stderr.String())
	}
	rules, _ := os.ReadFile(filepath.Join(g.home, ".config", "warden", "rules", "default.rules"))
	if !strings.Contains(string(rules), `additional_permissions={"write": ["`+g.a+`"]}`) {
		t.Fatalf("rule without its grant:\n%s", rules)
	}
	os.Remove(filepath.Join(g.a, "kept"))
	_, errOut, code := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", "touch", g.a+"/kept")
	if code != 0 || !exists(filepath.Join(g.a, "kept")) || strings.Contains(errOut, "Actions:") || !strings.Contains(errOut, "ran in the sandbox with write access to "+g.a) {
		t.Fatalf("the saved rule: exit %d\n%s", code, errOut)
	}
	// The policy check shows the rule's grant, and that it keeps the sandbox.
	out, _, _ := g.warden(t, "policy", "check", "--cwd", g.ws, "--json", "--", "touch", g.a+"/kept")
	var ev struct {
		Decision      string `json:"decision"`
		BypassSandbox bool   `json:"bypass_sandbox"`
		Grant         struct{ Write []string }
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || ev.Decision != "allow" || ev.BypassSandbox || !slices.Equal(ev.Grant.Write, []string{g.a}) {
		t.Errorf("policy check with the rule: %+v (%v)\n%s", ev, err, out)
	}
}

// TestPolicyCheckGrant: policy check shows what a request with additional
// permissions needs: the decision, the resolved grant and its risk.
func TestPolicyCheckGrant(t *testing.T) {
	g := newGrantEnv(t)
	type result struct {
		Decision string `json:"decision"`
		Grant    struct{ Write, Read []string }
		Asked    bool `json:"grant_asked"`
		Risk     struct {
			Level string   `json:"level"`
			Facts []string `json:"facts"`
		} `json:"risk"`
		Reason string `json:"reason"`
	}
	check := func(args ...string) result {
		t.Helper()
		out, stderr, _ := g.warden(t, append([]string{"policy", "check", "--cwd", g.ws, "--json"}, args...)...)
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s\n%s", err, out, stderr)
		}
		return r
	}
	r := check("--approval", "on-request", "--grant-write", g.a, "--", "touch", g.a+"/f")
	if r.Decision != "prompt" || !r.Asked || !slices.Equal(r.Grant.Write, []string{g.a}) || r.Risk.Level != "medium" || !strings.Contains(strings.Join(r.Risk.Facts, ";"), "grants write access to "+g.a) {
		t.Errorf("write grant: %+v", r)
	}
	r = check("--approval", "on-request", "--grant-read", "~/.ssh/id_deploy", "--", "cat", g.secret)
	if r.Decision != "prompt" || !slices.Equal(r.Grant.Read, []string{g.secret}) || r.Risk.Level != "high" {
		t.Errorf("read grant of a secret: %+v", r)
	}
	r = check("--approval", "on-request", "--grant-write", "~", "--", "true")
	if r.Risk.Level != "high" {
		t.Errorf("write grant of the home directory: %+v", r)
	}
	r = check("--approval", "never", "--grant-write", g.a, "--", "touch", g.a+"/f")
	if r.Decision != "forbidden" {
		t.Errorf("never: %+v", r)
	}
	r = check("--grant-write", "/", "--", "true")
	if r.Decision != "forbidden" || !strings.Contains(r.Reason, "danger-full-access") {
		t.Errorf("write grant of /: %+v", r)
	}
	// Human form names the grant.
	out, _, _ := g.warden(t, "policy", "check", "--cwd", g.ws, "--grant-write", g.a, "--", "touch", g.a+"/f")
	if !strings.Contains(out, "grant:     in the sandbox with write access to "+g.a+" (needs approval)") {
		t.Errorf("human output:\n%s", out)
	}
}

// plainName spells n in letters (12 is "bc"): a name unique to the process
// that does not look random.
func plainName(n int) string {
	var b []byte
	for _, d := range strconv.Itoa(n) {
		b = append(b, byte('a'+d-'0'))
	}
	return string(b)
}
