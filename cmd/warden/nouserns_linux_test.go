package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/linux"
)

// noUserns builds a program that runs its arguments where user namespaces
// are refused, as Docker's default seccomp profile refuses them
// (internal/nouserns).
func noUserns(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nouserns")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/wardenhq/warden/internal/nouserns").CombinedOutput(); err != nil {
		t.Fatalf("build nouserns: %v\n%s", err, out)
	}
	return bin
}

// wardenNoUserns runs warden under nouserns with home as in runWardenEnv,
// its state directory outside the writable roots (noUsernsState).
func wardenNoUserns(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(noUserns(t), append([]string{wardenBin(t)}, args...)...)
	cmd.Env = append(os.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+noUsernsState(t, home),
		"HOME="+home)
	return runCmd(t, cmd)
}

// noUsernsStates keeps one state directory per test home, as a home has.
var noUsernsStates sync.Map

func noUsernsState(t *testing.T, home string) string {
	if d, ok := noUsernsStates.Load(home); ok {
		return d.(string)
	}
	d := stateOutsideTmp(t)
	noUsernsStates.Store(home, d)
	return d
}

// stateOutsideTmp is a state directory outside /tmp and $TMPDIR. Without
// a mount namespace Landlock cannot hide a path inside a writable root, so
// Warden refuses to run while its own state directory lies in one (as a
// test home under /tmp does), rather than let commands read it.
func stateOutsideTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "warden-nouserns-state-")
	if err != nil {
		t.Skipf("no state directory outside /tmp for the fallback: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestExecWithoutUserNamespaces: where the kernel refuses user namespaces,
// a command under the default network (ask) runs in the Landlock + seccomp
// fallback with no network, and Warden says so once; a command that needs
// the network fails into the retry dialog, never reaching the host's
// network in the sandbox. The twin: with user namespaces the same fetch
// goes through Warden's proxy.
func TestExecWithoutUserNamespaces(t *testing.T) {
	needCurl(t)
	home := netHome(t, "")
	ws := t.TempDir()
	stdout, stderr, code := wardenNoUserns(t, home, "exec", "--cwd", ws, "--yes", "--", "sh", "-c", `echo hi; echo "net=$WARDEN_SANDBOX_NETWORK_DISABLED proxy=$http_proxy"`)
	if code != 0 || stdout != "hi\nnet=1 proxy=\n" {
		t.Fatalf("echo hi without user namespaces: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, sandbox.AskFallbackGap); n != 1 {
		t.Errorf("the fallback to network off is said %d times, want once:\n%s", n, stderr)
	}

	port := hostServer(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/x", port)
	curl := []string{"curl", "-sS", "-f", "--max-time", "10", "--noproxy", "", url}
	stdout, stderr, code = wardenNoUserns(t, home, append([]string{"exec", "--cwd", ws, "--approval", "on-failure", "--deny", "--"}, curl...)...)
	if code == 0 || strings.Contains(stdout, "hello") {
		t.Errorf("the sandboxed fetch reached the host without user namespaces: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "Run it again WITHOUT the sandbox?") || !strings.Contains(stderr, "the network is off in the sandbox") {
		t.Errorf("a fetch that failed for want of the network did not lead to the retry dialog:\n%s", stderr)
	}

	stdout, stderr, code = runWardenEnv(t, home, "", append([]string{"exec", "--cwd", ws, "--yes", "--"}, curl...)...)
	if code != 0 || stdout != "hello from the host /x" || strings.Contains(stderr, sandbox.AskFallbackGap) {
		t.Errorf("twin: ask with user namespaces did not go through the proxy: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
}

// TestDoctorWithoutUserNamespaces: doctor names the fallback, why, and what
// network ask becomes; with user namespaces it names none.
func TestDoctorWithoutUserNamespaces(t *testing.T) {
	home := netHome(t, "")
	stdout, stderr, code := wardenNoUserns(t, home, "doctor")
	if code != 0 || !strings.Contains(stdout, "sandbox for workspace-write, network off: linux-landlock") ||
		!strings.Contains(stdout, "fallback: user namespaces are refused here (operation not permitted)") ||
		!strings.Contains(stdout, `network_access "ask" runs as "off"`) {
		t.Errorf("doctor without user namespaces: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if linux.ProbeNamespaces("")["user"] != "" {
		t.Skip("this machine refuses user namespaces itself: no twin")
	}
	stdout, _, _ = runWardenEnv(t, home, "", "doctor")
	if strings.Contains(stdout, "fallback:") {
		t.Errorf("twin: doctor names a fallback where user namespaces work:\n%s", stdout)
	}
}

// TestServeWithoutUserNamespaces: through the editor, the fallback is said
// once a session (window/showMessage at the first run, not the next), and
// a fetch that fails for want of the network asks to retry outside the
// sandbox, which then runs it.
func TestServeWithoutUserNamespaces(t *testing.T) {
	needCurl(t)
	wrapper := filepath.Join(t.TempDir(), "warden-nouserns")
	script := fmt.Sprintf("#!/bin/sh\nexec %q %q \"$@\"\n", noUserns(t), wardenBin(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := lsptest.Start(t, lsptest.Options{Bin: wrapper, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + stateOutsideTmp(t)}})
	c.Initialize(map[string]any{"approvalPolicy": "on-failure"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	run := func(argv ...string) string {
		t.Helper()
		mark := c.Mark()
		if _, err := c.ExecuteCommand("warden.exec", map[string]any{"command": argv}); err != nil {
			t.Fatalf("warden.exec %v: %v", argv, err)
		}
		m := c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("Warden: `"))
		return string(m.Params)
	}
	said := func() int {
		n := 0
		for _, m := range c.Messages() {
			if m.Method == "window/showMessage" && strings.Contains(string(m.Params), "cannot enforce everything on this machine") {
				n++
			}
		}
		return n
	}
	if summary := run("echo", "hi"); !strings.Contains(summary, "exited 0") {
		t.Fatalf("echo hi: %s", summary)
	}
	c.WaitFor("window/showMessage", lsptest.MessageContains(`network_access "ask" ran as "off"`))
	if summary := run("true"); !strings.Contains(summary, "exited 0") || said() != 1 {
		t.Errorf("second run: %s; the fallback said %d times, want once", summary, said())
	}

	port := hostServer(t)
	mark := c.Mark()
	summary := run("curl", "-sS", "-f", "--max-time", "10", "--noproxy", "", fmt.Sprintf("http://127.0.0.1:%d/x", port))
	var retry bool
	for _, m := range c.Messages()[mark:] {
		if m.Method == "window/showMessageRequest" && strings.Contains(string(m.Params), "sandbox blocked") && strings.Contains(string(m.Params), "NOT sandboxed") {
			retry = true
		}
	}
	if !retry || !strings.Contains(summary, "without the sandbox") || !strings.Contains(summary, "exited 0") {
		t.Errorf("the fetch did not fail into the retry dialog and run outside the sandbox (retry dialog %v): %s", retry, summary)
	}
}

// TestUndoWithoutUserNamespaces: in the Landlock + seccomp fallback (no pid
// or mount namespace: the helper's supervisor sees the command by its
// host pid) a command's changes are still reported as they happen, and
// undone byte for byte.
func TestUndoWithoutUserNamespaces(t *testing.T) {
	home := netHome(t, "")
	ws := t.TempDir()
	for name, content := range map[string]string{"kept.txt": "kept\n", "gone.txt": "gone\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := wardenNoUserns(t, home, "exec", "--cwd", ws, "--yes", "--", "sh", "-c", "echo more >> kept.txt; rm gone.txt; mkdir d; echo new > d/made.txt")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"deleted gone.txt", "modified kept.txt", "created d/made.txt"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the outcome should say %q:\n%s", want, stderr)
		}
	}
	if stdout, stderr, code := wardenNoUserns(t, home, "undo", "--cwd", ws); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	for name, content := range map[string]string{"kept.txt": "kept\n", "gone.txt": "gone\n"} {
		if data, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(data) != content {
			t.Errorf("after undo %s is %q (%v), want %q", name, data, err, content)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "d")); !os.IsNotExist(err) {
		t.Errorf("undo should have removed d/: %v", err)
	}
}
