package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostServer is an HTTP server on the host's loopback, outside any sandbox.
func hostServer(t *testing.T) (port int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the host %s", r.URL.Path)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
}

// TestExecNetworkAskThroughTheProxy: under the default network (ask) a
// sandboxed curl reaches a host server only through Warden's proxy, and
// only when the question is answered yes or a network_rule allows it.
func TestExecNetworkAskThroughTheProxy(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	port := hostServer(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/x", port)

	// 127.0.0.1 inside the sandbox is the sandbox's own loopback, so
	// NO_PROXY sends it there directly; --noproxy '' makes curl take the
	// host's server through the proxy, as it would any outside host.
	curl := []string{"curl", "-sS", "-f", "--noproxy", ""}
	// Allowed (--yes answers "Allow once"): the download works.
	stdout, stderr, code := runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--yes", "--"}, append(curl, url)...)...)
	if code != 0 || stdout != "hello from the host /x" {
		t.Fatalf("allowed: exit %d stdout %q\n%s", code, stdout, stderr)
	}
	audit, _ := os.ReadFile(filepath.Join(home, "state", "warden", "audit.log"))
	if !strings.Contains(string(audit), `"event":"connection"`) || !strings.Contains(string(audit), fmt.Sprintf(`"port":%d`, port)) {
		t.Errorf("the connection is not audited:\n%s", audit)
	}

	// Denied: the proxy answers 403, curl fails, and Warden says which
	// host was refused and why.
	stdout, stderr, code = runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--deny", "--"}, append(curl, url)...)...)
	if code == 0 || strings.Contains(stdout, "hello") || !strings.Contains(stderr, "warden exec: proxy: network to 127.0.0.1:") {
		t.Errorf("denied: exit %d stdout %q\n%s", code, stdout, stderr)
	}

	// Bypass attempts fail even when every question is answered yes:
	// straight to the host's port, and with the proxy switched off.
	for _, argv := range [][]string{
		{"curl", "-sS", "-f", "--noproxy", "*", url},
		{"sh", "-c", "unset http_proxy HTTP_PROXY ALL_PROXY all_proxy; curl -sS -f " + url},
	} {
		stdout, stderr, code = runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--yes", "--"}, argv...)...)
		if code == 0 || strings.Contains(stdout, "hello") {
			t.Errorf("bypass %q reached the host: exit %d stdout %q\n%s", argv, code, stdout, stderr)
		}
	}

	// A network_rule allows it without a question (--deny would refuse
	// any question), and the twin without the rule is refused.
	rules := filepath.Join(dirOutsideWritableRoots(t), "net.rules") // one in /tmp is the sandbox's to rewrite: not applied
	os.WriteFile(rules, []byte(`network_rule(host="127.0.0.1", decision="allow", justification="the test server")`+"\n"), 0o600)
	stdout, stderr, code = runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--deny", "--rules", rules, "--"}, append(curl, url)...)...)
	if code != 0 || stdout != "hello from the host /x" {
		t.Errorf("allowed by rule: exit %d stdout %q\n%s", code, stdout, stderr)
	}

	// network off: no proxy at all, nothing reaches the host.
	stdout, stderr, code = runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--yes", "--network=off", "--"}, append(curl, url)...)...)
	if code == 0 || strings.Contains(stdout, "hello") {
		t.Errorf("network off: exit %d stdout %q\n%s", code, stdout, stderr)
	}
}
