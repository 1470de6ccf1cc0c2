package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/linux"
	"github.com/wardenhq/warden/sandbox/protect"
)

// TestRunMasksCachedAndNewSockets drives the launcher's process-wide cache
// through Run: a socket it has cached and one created just before a run are
// both unreachable from the sandbox, while a socket inside still works.
func TestRunMasksCachedAndNewSockets(t *testing.T) {
	withoutMediation(t)
	probe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	xdg := t.TempDir()
	old := filepath.Join(xdg, "old.sock")
	listenAccepting(t, old)
	// Older than the racy margin, so the first run caches the directory.
	time.Sleep(linux.SocketRacyMargin + 50*time.Millisecond)
	ws := t.TempDir()
	run := func(args ...string) Result {
		t.Helper()
		res, err := Run(context.Background(), Command{
			Argv: append([]string{probe}, args...), Cwd: ws, Helper: testHelper,
			Policy:  Policy{Mode: WorkspaceWrite, Workspace: []string{ws}},
			Env:     EnvPolicy{Set: map[string]string{probeEnv: "1", "XDG_RUNTIME_DIR": xdg}},
			Timeout: 20 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run("dial-unix", old); res.ExitCode == 0 {
		t.Fatalf("connected to %s from the sandbox:\n%s", old, res.Output)
	}
	if !socketCache.Cached(resolve(t, xdg)) {
		t.Fatalf("the launcher did not cache %s", xdg)
	}
	if res := run("dial-unix", old); res.ExitCode == 0 {
		t.Errorf("connected to the cached %s from the sandbox:\n%s", old, res.Output)
	}
	fresh := filepath.Join(xdg, "new.sock")
	listenAccepting(t, fresh)
	if res := run("dial-unix", fresh); res.ExitCode == 0 {
		t.Errorf("connected to %s, created just before the run:\n%s", fresh, res.Output)
	}
	if res := run("unix-roundtrip", filepath.Join(ws, "inside.sock")); res.ExitCode != 0 {
		t.Errorf("a socket inside the workspace failed (exit %d):\n%s", res.ExitCode, res.Output)
	}
	// Outside the sandbox both still answer: the masks are the sandbox's.
	for _, p := range []string{old, fresh} {
		c, err := net.Dial("unix", p)
		if err != nil {
			t.Errorf("dial %s outside the sandbox: %v", p, err)
			continue
		}
		c.Close()
	}
}

func listenAccepting(t *testing.T, p string) {
	t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go acceptAll(l)
}

// asNobodyEnv makes TestUnlistableDirectoryIsHidden the unprivileged half.
const asNobodyEnv = "WARDEN_TEST_AS_NOBODY"

// TestUnlistableDirectoryIsHidden: a user who can enter a directory but not
// list it can still connect to a socket in it by name, and the scan cannot
// see that socket, so the sandbox hides the whole directory. A directory
// the user cannot enter is skipped: nothing in it is reachable. Root can
// list everything, so the launcher runs as nobody in a child process.
func TestUnlistableDirectoryIsHidden(t *testing.T) {
	if os.Getenv(asNobodyEnv) != "" {
		unlistableAsNobody(t)
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to make directories another user cannot list")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "bin")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	ws := filepath.Join(base, "ws")
	for _, d := range []string{bin, tmp, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyExecutable(t, self, filepath.Join(bin, "sandbox.test"))
	copyExecutable(t, testHelper, filepath.Join(bin, "warden"))
	if err := os.Chown(ws, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(tmp, "ssh-hidden")   // enter, not list
	private := filepath.Join(tmp, "ssh-private") // neither
	for d, mode := range map[string]os.FileMode{hidden: 0o711, private: 0o700} {
		p := filepath.Join(d, "agent.sock")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		listenAccepting(t, p)
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "sandbox.test"), "-test.run=^TestUnlistableDirectoryIsHidden$", "-test.v", "-test.count=1")
	cmd.Env = []string{asNobodyEnv + "=1", "WARDEN_BIN=" + filepath.Join(bin, "warden"), "PATH=" + os.Getenv("PATH"),
		"HOME=" + ws, "TMPDIR=" + tmp, "WS=" + ws, "HIDDEN=" + hidden, "PRIVATE=" + private}
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "--- SKIP") {
		t.Skipf("as nobody:\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func unlistableAsNobody(t *testing.T) {
	ws, hidden, private := os.Getenv("WS"), os.Getenv("HIDDEN"), os.Getenv("PRIVATE")
	_, dirs, err := linux.NewSocketScanner().ToMask(os.Environ(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs, hidden) || slices.Contains(dirs, private) {
		t.Errorf("directories to hide: %v; want %s and not %s", dirs, hidden, private)
	}
	// Hiding a directory the command works in would hide its workspace.
	inner := filepath.Join(hidden, "project")
	var refused *RefusedError
	if _, _, err := socketsToMask(os.Environ(), inner, []protect.Root{{Path: inner}}); !errors.As(err, &refused) || !strings.Contains(err.Error(), hidden) {
		t.Errorf("working inside %s: %v, want a refusal naming it", hidden, err)
	}
	sock := filepath.Join(hidden, "agent.sock")
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("outside the sandbox, nobody cannot reach %s by name either, so this proves nothing: %v", sock, err)
	}
	c.Close()
	run := func(args ...string) Result {
		t.Helper()
		res, err := Run(context.Background(), Command{
			Argv: append([]string{os.Args[0]}, args...), Cwd: ws, Helper: testHelper,
			Policy:  Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true},
			Env:     EnvPolicy{Set: map[string]string{probeEnv: "1"}},
			Timeout: 20 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("dial-unix", sock)
	if res.Sandbox != "linux" {
		t.Skipf("user namespaces are unavailable to an unprivileged user here (sandbox %q): nothing is masked without them", res.Sandbox)
	}
	if res.ExitCode == 0 {
		t.Errorf("connected to %s in a directory that cannot be listed:\n%s", sock, res.Output)
	}
	if res := run("unix-roundtrip", filepath.Join(ws, "inside.sock")); res.ExitCode != 0 {
		t.Errorf("a socket inside the workspace failed (exit %d):\n%s", res.ExitCode, res.Output)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func resolve(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
