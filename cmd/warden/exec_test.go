package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExecRunsSandboxedAndPassesTheExitStatus(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	_, stderr, code := runWarden(t, "exec", "--cwd", ws, "--", "sh", "-c", "echo hi > inside; exit 7")
	if code != 7 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "inside")); string(b) != "hi\n" {
		t.Errorf("write inside the workspace: %q", b)
	}
	outside := dirOutsideWritableRoots(t)
	// --approval never: no prompt, and no retry outside the sandbox.
	_, stderr, code = runWarden(t, "exec", "--approval", "never", "--cwd", ws, "--", "sh", "-c", "echo x > "+filepath.Join(outside, "f"))
	if code == 0 || !strings.Contains(stderr, "sandbox denial") {
		t.Errorf("write outside: exit %d, stderr %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("the write outside happened")
	}
	// --writable-root makes it writable.
	_, stderr, code = runWarden(t, "exec", "--approval", "never", "--cwd", ws, "--writable-root", outside, "--", "sh", "-c", "echo x > "+filepath.Join(outside, "f"))
	if code != 0 {
		t.Errorf("--writable-root: exit %d, %s", code, stderr)
	}
}

func TestExecStreamsOutputAndHonoursNetworkFlag(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// The default (ask) has no network of its own: only the proxy.
	stdout, _, code := runWarden(t, "exec", "--", "sh", "-c", `echo "net=$WARDEN_SANDBOX_NETWORK_DISABLED proxy=$https_proxy"`)
	if code != 0 || stdout != "net= proxy=http://127.0.0.1:3128\n" {
		t.Errorf("default: %q exit %d", stdout, code)
	}
	stdout, _, code = runWarden(t, "exec", "--network=off", "--", "sh", "-c", `echo "net=$WARDEN_SANDBOX_NETWORK_DISABLED"`)
	if code != 0 || stdout != "net=1\n" {
		t.Errorf("--network=off: %q exit %d", stdout, code)
	}
	stdout, _, code = runWarden(t, "exec", "--network", "--", "sh", "-c", `echo "net=$WARDEN_SANDBOX_NETWORK_DISABLED"`)
	if code != 0 || stdout != "net=\n" {
		t.Errorf("--network: %q exit %d", stdout, code)
	}
}

func TestExecRefusalsAndUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if _, stderr, code := runWarden(t, "exec", "--writable-root", "/no/such/dir", "--", "true"); code != 77 || !strings.Contains(stderr, "/no/such/dir") {
		t.Errorf("missing writable root: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runWarden(t, "exec", "--sandbox", "bogus", "--", "true"); code != 2 || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad mode: exit %d, %s", code, stderr)
	}
	if _, _, code := runWarden(t, "exec"); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
	if _, stderr, code := runWarden(t, "exec", "--", "no-such-command-xyz"); code != 127 || !strings.Contains(stderr, "not found") {
		t.Errorf("missing command: exit %d, %s", code, stderr)
	}
}

func TestDoctorReportsLayers(t *testing.T) {
	stdout, stderr, code := runWarden(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	s := rep.Sandbox
	if s.Kernel.Kernel == "" || rep.Go == "" {
		t.Errorf("missing platform facts: %+v", rep)
	}
	if !strings.HasPrefix(s.SelfTest, "ok") {
		t.Errorf("self-test: %s", s.SelfTest)
	}
	enforced := map[string]bool{}
	for _, l := range s.Layers {
		enforced[l.Name] = l.Enforced
	}
	for _, name := range []string{"namespaces", "landlock", "seccomp", "capabilities"} {
		if _, ok := enforced[name]; !ok {
			t.Errorf("layer %s missing: %+v", name, s.Layers)
		}
	}
	// On this kind of machine everything is available; say so if not.
	if s.Mechanism == "linux" && (!enforced["namespaces"] || !enforced["seccomp"]) {
		t.Errorf("mechanism linux but layers %v", enforced)
	}
	if len(s.NotEnforced) == 0 {
		t.Error("doctor should always list what it cannot enforce (reads, at least)")
	}
	text, _, code := runWarden(t, "doctor")
	if code != 0 || !strings.Contains(text, "landlock:") || !strings.Contains(text, "not enforced on this machine") {
		t.Errorf("text doctor: exit %d\n%s", code, text)
	}
}

// dirOutsideWritableRoots makes a directory that workspace-write does not
// make writable: /tmp and $TMPDIR (where t.TempDir lives) are writable roots,
// so use the checkout, or /var/tmp when the checkout itself is under a
// temporary directory (as a CI clone may be).
func dirOutsideWritableRoots(t *testing.T) string {
	t.Helper()
	parent, _ := os.Getwd()
	for _, tmp := range []string{"/tmp", os.TempDir()} {
		if rel, err := filepath.Rel(tmp, parent); err == nil && !strings.HasPrefix(rel, "..") {
			parent = "/var/tmp"
		}
	}
	if rel, err := filepath.Rel(os.TempDir(), parent); err == nil && !strings.HasPrefix(rel, "..") {
		t.Skipf("no directory outside the writable roots: TMPDIR is %s", os.TempDir())
	}
	outside, err := os.MkdirTemp(parent, ".exec-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	return outside
}
