package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// netCurl is a curl that takes the host's servers through Warden's proxy
// (see TestExecNetworkAskThroughTheProxy for why --noproxy ”).
func netCurl(url string) []string { return []string{"curl", "-sS", "-f", "--noproxy", "", url} }

func execArgs(ws string, flags []string, argv []string) []string {
	return append(append(append([]string{"exec", "--cwd", ws}, flags...), "--"), argv...)
}

// privateHostName is a name this machine resolves only to loopback or
// private addresses (its own host name usually), or "".
func privateHostName(t *testing.T) string {
	t.Helper()
	name, err := os.Hostname()
	if err != nil || name == "" || name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return ""
	}
	addrs, err := net.LookupHost(name)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || !(ip.IsLoopback() || ip.IsPrivate()) {
			return ""
		}
	}
	return name
}

// TestExecGrantNetwork: `--grant-network 127.0.0.1:P` is asked once (the
// command, with the grant), and the granted host is then reached with no
// network question; the grant is reported. Escapes: the grant does not
// reach a name that resolves to a private address even when granted by
// name, and under network off it is refused outright.
func TestExecGrantNetwork(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	port := hostServer(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/granted", port)
	grant := fmt.Sprintf("127.0.0.1:%d", port)

	stdout, stderr, code := runWardenEnv(t, home, "", execArgs(ws, []string{"--yes", "--grant-network", grant}, netCurl(url))...)
	if code != 0 || stdout != "hello from the host /granted" {
		t.Fatalf("granted: exit %d stdout %q\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "Actions:"); n != 1 || strings.Contains(stderr, "wants to connect") ||
		!strings.Contains(stderr, "in the sandbox with network to "+grant+"?") ||
		!strings.Contains(stderr, "warden exec: ran in the sandbox with network to "+grant) {
		t.Fatalf("granted: %d dialogs\n%s", n, stderr)
	}
	audit, _ := os.ReadFile(filepath.Join(home, "state", "warden", "audit.log"))
	if !strings.Contains(string(audit), `"grant":{"network":["`+grant+`"]}`) {
		t.Errorf("the audit log does not record the grant:\n%s", audit)
	}

	// Escape: a name that resolves to a private address is refused by the
	// proxy even though the grant names it (and the user approved).
	if name := privateHostName(t); name != "" {
		byName := fmt.Sprintf("http://%s:%d/private", name, port)
		stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--yes", "--grant-network", fmt.Sprintf("%s:%d", name, port)}, netCurl(byName))...)
		if code == 0 || strings.Contains(stdout, "hello") || !strings.Contains(stderr, "resolves to a private address") {
			t.Errorf("a granted name resolving to a private address was reached: exit %d stdout %q\n%s", code, stdout, stderr)
		}
	} else {
		t.Log("no host name resolving to a private address: that case is not run")
	}

	// Network off: the grant is refused, nothing runs.
	stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--yes", "--network=off", "--grant-network", grant}, netCurl(url))...)
	if code != exitRefused || strings.Contains(stdout, "hello") || !strings.Contains(stderr, `network grants need network_access = "ask"`) {
		t.Errorf("network off: exit %d stdout %q\n%s", code, stdout, stderr)
	}
}

// TestExecRuleNetworkGrant: an allow rule with additional_permissions
// network runs the command sandboxed with the grant: under --deny (every
// question refused) the granted host is reached with no dialog. Escapes:
// the same host on another port, and another name for the same server,
// meet the network dialog (refused by --deny).
func TestExecRuleNetworkGrant(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	port, other := hostServer(t), hostServer(t)
	rules := filepath.Join(dirOutsideWritableRoots(t), "curl.rules") // a rules file in /tmp is the sandbox's to rewrite
	rule := fmt.Sprintf(`prefix_rule(pattern=["curl"], decision="allow", additional_permissions={"network": ["127.0.0.1:%d"]})`, port)
	os.WriteFile(rules, []byte(rule+"\n"), 0o600)
	flags := []string{"--deny", "--rules", rules}

	stdout, stderr, code := runWardenEnv(t, home, "", execArgs(ws, flags, netCurl(fmt.Sprintf("http://127.0.0.1:%d/rule", port)))...)
	if code != 0 || stdout != "hello from the host /rule" || strings.Contains(stderr, "Actions:") ||
		!strings.Contains(stderr, fmt.Sprintf("ran in the sandbox with network to 127.0.0.1:%d", port)) {
		t.Fatalf("rule grant: exit %d stdout %q\n%s", code, stdout, stderr)
	}
	for _, url := range []string{fmt.Sprintf("http://127.0.0.1:%d/port", other), fmt.Sprintf("http://localhost:%d/name", port)} {
		stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, flags, netCurl(url))...)
		if code == 0 || strings.Contains(stdout, "hello") || !strings.Contains(stderr, "wants to connect to") {
			t.Errorf("%s outside the rule's grant: exit %d stdout %q\n%s", url, code, stdout, stderr)
		}
	}
	// The policy check shows the rule's grant and what the proxy will do.
	stdout, _, _ = runWardenEnv(t, home, "", "policy", "check", "--cwd", ws, "--rules", rules, "--", "curl", fmt.Sprintf("http://127.0.0.1:%d/x", port))
	if !strings.Contains(stdout, fmt.Sprintf("grant:     in the sandbox with network to 127.0.0.1:%d (from the matching rules)", port)) ||
		!strings.Contains(stdout, "granted with the command") {
		t.Errorf("policy check with the rule:\n%s", stdout)
	}
}

// TestExecRetryWithNetworkGrant: under granular with network prompts
// rejected, the proxy refuses the host; the retry dialog offers exactly
// that host in the sandbox (running unsandboxed is a separate action), and
// approved (--yes) the rerun reaches it sandboxed. No retry is offered
// after a forbid rule; --deny refuses the retry and nothing is reached.
func TestExecRetryWithNetworkGrant(t *testing.T) {
	needCurl(t)
	home := netHome(t, `approval_policy = "granular"`+"\n"+`granular_reject = ["network"]`)
	ws := t.TempDir()
	port := hostServer(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/retry", port)
	host := fmt.Sprintf("127.0.0.1:%d", port)

	stdout, stderr, code := runWardenEnv(t, home, "", execArgs(ws, []string{"--yes"}, netCurl(url))...)
	if code != 0 || stdout != "hello from the host /retry" ||
		!strings.Contains(stderr, "Retry it in the sandbox with network to "+host+"?") ||
		!strings.Contains(stderr, "Actions: Allow once | Allow for session | Run without sandbox | Deny | Deny and stop") ||
		!strings.Contains(stderr, "ran in the sandbox with network to "+host) {
		t.Fatalf("retry: exit %d stdout %q\n%s", code, stdout, stderr)
	}

	stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--deny"}, netCurl(url))...)
	if code == 0 || strings.Contains(stdout, "hello") || !strings.Contains(stderr, "Retry it in the sandbox with network to") {
		t.Errorf("denied retry: exit %d stdout %q\n%s", code, stdout, stderr)
	}

	rules := filepath.Join(t.TempDir(), "net.rules")
	os.WriteFile(rules, []byte(`network_rule(host="127.0.0.1", decision="forbidden")`+"\n"), 0o600)
	stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--yes", "--rules", rules}, netCurl(url))...)
	if code == 0 || strings.Contains(stdout, "hello") || strings.Contains(stderr, "Actions:") {
		t.Errorf("forbid rule: exit %d stdout %q\n%s", code, stdout, stderr)
	}
}

// TestPolicyCheckNetworkGrant: policy check shows a network grant, that
// it needs approval, its risk from the host facts, and the refusal under
// network off.
func TestPolicyCheckNetworkGrant(t *testing.T) {
	home := netHome(t, "")
	ws := t.TempDir()
	check := func(args ...string) policyJSONGrant {
		t.Helper()
		out, stderr, _ := runWardenEnv(t, home, "", append([]string{"policy", "check", "--cwd", ws, "--json", "--approval", "on-request"}, args...)...)
		var r policyJSONGrant
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s\n%s", err, out, stderr)
		}
		return r
	}
	r := check("--grant-network", "PyPI.org:443", "--", "pip", "download", "six")
	if r.Decision != "prompt" || !r.Asked || strings.Join(r.Grant.Network, ",") != "pypi.org:443" || r.Risk.Level == "high" ||
		!strings.Contains(strings.Join(r.Risk.Facts, ";"), "grants network to pypi.org:443: pypi.org is PyPI") {
		t.Errorf("registry grant: %+v", r)
	}
	if len(r.Network) != 1 || r.Network[0].Decision != "allow" || !strings.Contains(r.Network[0].Reason, "granted with the command once the request is approved") {
		t.Errorf("destinations: %+v", r.Network)
	}
	r = check("--grant-network", "169.254.169.254", "--", "true")
	if r.Decision != "prompt" || r.Risk.Level != "high" || !strings.Contains(r.Risk.Summary, "link-local") {
		t.Errorf("metadata grant: %+v", r)
	}
	r = check("--network=off", "--grant-network", "pypi.org:443", "--", "true")
	if r.Decision != "forbidden" || !strings.Contains(r.Reason, `network grants need network_access = "ask"`) {
		t.Errorf("network off: %+v", r)
	}
	// Twin: the same request with the network on ask is not refused.
	if r = check("--grant-network", "pypi.org:443", "--", "true"); r.Decision != "prompt" {
		t.Errorf("twin: %+v", r)
	}
}

type policyJSONGrant struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Asked    bool   `json:"grant_asked"`
	Grant    struct {
		Network []string `json:"network"`
	} `json:"grant"`
	Risk struct {
		Level   string   `json:"level"`
		Summary string   `json:"summary"`
		Facts   []string `json:"facts"`
	} `json:"risk"`
	Network []struct {
		Host     string `json:"host"`
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	} `json:"network"`
}

// TestExecNetworkGrantTerminalAlwaysAllow: on the terminal, Always allow
// for a request with a network grant saves the prefix rule with it; the
// next run (no flag, every question refused) runs sandboxed with the grant
// and reaches the host with no dialog; another port is still asked about.
func TestExecNetworkGrantTerminalAlwaysAllow(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	port, other := hostServer(t), hostServer(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/kept", port)
	// A rule cannot hold an empty token (--noproxy ''): naming another
	// host overrides NO_PROXY just as well.
	curl := func(url string) []string { return []string{"curl", "-sS", "-f", "--noproxy", "none.invalid", url} }
	master, slave := openPTY(t)
	cmd := exec.Command(wardenBin(t), execArgs(ws, []string{"--approval", "on-request", "--grant-network", fmt.Sprintf("127.0.0.1:%d", port)}, curl(url))...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	master.Write([]byte("3\n"))
	if err := cmd.Wait(); err != nil || stdout.String() != "hello from the host /kept" {
		t.Fatalf("%v: %q\n%s", err, stdout.String(), stderr.String())
	}
	rules, _ := os.ReadFile(filepath.Join(home, "config", "warden", "rules", "default.rules"))
	if !strings.Contains(string(rules), fmt.Sprintf(`additional_permissions={"network": ["127.0.0.1:%d"]}`, port)) {
		t.Fatalf("rule without its network grant:\n%s\n%s", rules, stderr.String())
	}
	out, errOut, code := runWardenEnv(t, home, "", execArgs(ws, []string{"--approval", "on-request", "--deny"}, curl(url))...)
	if code != 0 || out != "hello from the host /kept" || strings.Contains(errOut, "Actions:") {
		t.Fatalf("the saved rule: exit %d %q\n%s", code, out, errOut)
	}
	// Twin: the rule's command on another port meets the network dialog.
	out, errOut, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--approval", "on-request", "--deny"}, curl(fmt.Sprintf("http://127.0.0.1:%d/kept", other)))...)
	if code == 0 || strings.Contains(out, "hello") {
		t.Errorf("another port under the saved rule: exit %d %q\n%s", code, out, errOut)
	}
}

// TestExecNetworkAllowRuleFromTheWorkspace: a network_rule allow in a
// rules file inside the workspace is one a sandboxed command could have
// written itself: the proxy does not apply it, and the connection meets
// the dialog (refused by --deny). The twin: the same file outside every
// writable root lets the connection through unasked.
func TestExecNetworkAllowRuleFromTheWorkspace(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	port := hostServer(t)
	rule := []byte(`network_rule(host="127.0.0.1", decision="allow")` + "\n")
	inside := filepath.Join(ws, "net.rules")
	outside := filepath.Join(dirOutsideWritableRoots(t), "net.rules")
	os.WriteFile(inside, rule, 0o600)
	os.WriteFile(outside, rule, 0o600)
	url := fmt.Sprintf("http://127.0.0.1:%d/rule", port)
	stdout, stderr, code := runWardenEnv(t, home, "", execArgs(ws, []string{"--deny", "--rules", inside}, netCurl(url))...)
	if code == 0 || strings.Contains(stdout, "hello") || !strings.Contains(stderr, "wants to connect to") {
		t.Errorf("attack: a network allow rule from the workspace: exit %d stdout %q\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runWardenEnv(t, home, "", execArgs(ws, []string{"--deny", "--rules", outside}, netCurl(url))...)
	if code != 0 || stdout != "hello from the host /rule" {
		t.Errorf("twin: the rule from outside the roots: exit %d stdout %q\n%s", code, stdout, stderr)
	}
}
