package approvals

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeverRunsOnlyWhatTheSandboxStops drives the real binary under
// `--approval never`: a high-risk command whose every high-risk effect the
// sandbox stops runs sandboxed and achieves nothing outside the writable
// roots; one the sandbox cannot stop (discarding work, deleting repository
// data) is refused (exit 77) and changes nothing; a confined deletion runs.
func TestNeverRunsOnlyWhatTheSandboxStops(t *testing.T) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		t.Skip("WARDEN_BIN not set (make build; WARDEN_BIN=$PWD/bin/warden)")
	}
	home := hostBin(t) // outside the writable roots
	ws := t.TempDir()
	state := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"XDG_STATE_HOME=" + filepath.Join(state, "state"), "XDG_CACHE_HOME=" + filepath.Join(state, "cache"), "GIT_CONFIG_NOSYSTEM=1"}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	bare := filepath.Join(home, "remote.git")
	git(home, "init", "-q", "--bare", bare)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	git(ws, "init", "-q")
	git(ws, "add", ".")
	git(ws, "commit", "-qm", "one")
	git(ws, "remote", "add", "origin", "file://"+bare)
	git(ws, "push", "-q", "origin", "HEAD:refs/heads/main")
	git(ws, "commit", "-q", "--amend", "-m", "rewritten")
	remoteRef := func() string {
		b, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "refs/heads/main").Output()
		return string(b)
	}
	before := remoteRef()
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	os.WriteFile(filepath.Join(home, "Documents", "report.txt"), []byte("r"), 0o644)
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.WriteFile(filepath.Join(ws, "build", "out.o"), []byte("o"), 0o644)

	run := func(script string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, "exec", "--approval", "never", "--cwd", ws, "--", "bash", "-c", script)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("warden exec: %v", err)
		}
		return 0, string(out)
	}
	// Run sandboxed, stopped by the sandbox.
	for _, c := range []struct {
		script string
		intact func() bool
	}{
		{"echo 'export X=1' >> ~/.bashrc", func() bool { _, err := os.Stat(filepath.Join(home, ".bashrc")); return err != nil }},
		{"mv ~/Documents " + filepath.Join(t.TempDir(), "x"), func() bool { _, err := os.Stat(filepath.Join(home, "Documents", "report.txt")); return err == nil }},
		{"git push --force origin HEAD:refs/heads/main", func() bool { return remoteRef() == before }},
	} {
		code, out := run(c.script)
		if code == 77 {
			t.Errorf("%q was refused; the sandbox stops it, so never runs it sandboxed: %s", c.script, out)
		}
		if !c.intact() {
			t.Errorf("%q got through the sandbox (exit %d): %s", c.script, code, out)
		}
	}
	// Refused: the sandbox would let these through.
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("uncommitted\n"), 0o644)
	for _, script := range []string{"git reset --hard HEAD", "rm -rf .git", "git clean -fdx"} {
		if code, out := run(script); code != 77 || !strings.Contains(out, "never") {
			t.Errorf("%q under never: exit %d, want 77 (refused): %s", script, code, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "uncommitted\n" {
		t.Errorf("uncommitted work lost: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "build", "out.o")); err != nil {
		t.Errorf("git clean ran: %v", err)
	}
	// The twin: a confined deletion runs.
	if code, out := run("rm -rf build"); code != 0 {
		t.Errorf("rm -rf build under never: exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err == nil {
		t.Error("rm -rf build did not delete build/")
	}
}
