package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asUser runs `warden exec` scenarios as an unprivileged user: the scan of
// the writable roots runs with the user's rights, and root would list a
// mode-000 directory anyway. Run as root, the scenario is run as nobody
// (setpriv) in a directory and with a copy of the binary nobody can use.
type asUser struct {
	t    *testing.T
	base string // owned by the user running the scenario
	bin  string
	wrap []string
}

func newAsUser(t *testing.T) *asUser {
	t.Helper()
	base, err := os.MkdirTemp("", "unlistable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(base, func(p string, _ os.FileInfo, _ error) error { os.Chmod(p, 0o755); return nil })
		os.RemoveAll(base)
	})
	u := &asUser{t: t, base: base, bin: filepath.Join(base, "warden")}
	src, err := os.Open(wardenBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(u.bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	if os.Getuid() == 0 {
		sp, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: the scan would read any directory")
		}
		for _, p := range []string{base, u.bin} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		u.wrap = []string{sp, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	return u
}

// sh runs script as the user with W set to a one-shot workspace-write
// `warden exec` in $WS, and temporary HOME and XDG directories.
func (u *asUser) sh(script string) string {
	u.t.Helper()
	args := append(append([]string(nil), u.wrap...), "sh", "-c", script)
	cmd := exec.Command(args[0], args[1:]...)
	h := filepath.Join(u.base, "home")
	cmd.Env = []string{"HOME=" + h, "XDG_STATE_HOME=" + h + "/state", "XDG_CONFIG_HOME=" + h + "/config",
		"XDG_CACHE_HOME=" + h + "/cache", "PATH=" + os.Getenv("PATH"), "WS=" + filepath.Join(u.base, "ws"), "WARDEN=" + u.bin,
		"W=" + u.bin + " exec --sandbox workspace-write --approval never --cwd " + filepath.Join(u.base, "ws") + " --"}
	cmd.Dir = u.base
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// A command cannot hide a nested repository from the next run's scan by
// making a directory above it unreadable (mode 000: not listed; 100: not
// readable; 600: listed but not searchable, so the repository's directory
// cannot be listed), then, in the next run, making it readable again and
// writing the repository's .git/config (core.fsmonitor: code the user's
// git runs on the host). The unreadable directory is held read-only for
// the run: its mode cannot be changed back. The twin: an unreadable
// directory without a repository does not stop the next run, which writes
// the rest of the workspace.
func TestUnreadableDirectoryDoesNotHideANestedRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range []string{"000", "100", "600", "repo600", "repo000"} {
		t.Run(mode, func(t *testing.T) {
			u := newAsUser(t)
			dir := "sub"
			if m, ok := strings.CutPrefix(mode, "repo"); ok {
				dir, mode = "sub/proj", m
			}
			out := u.sh(`set -e; mkdir -p "$WS/sub" "$HOME"; git init -q "$WS"; git init -q --template= "$WS/sub/proj"
$W sh -c 'chmod ` + mode + ` ` + dir + `; echo hidden=$?'
$W sh -c 'chmod 755 ` + dir + `; printf "[core]\n\tfsmonitor = touch pwned\n" >> sub/proj/.git/config; echo written=$?'`)
			cfg := filepath.Join(u.base, "ws/sub/proj/.git/config")
			os.Chmod(filepath.Join(u.base, "ws/sub"), 0o755)
			os.Chmod(filepath.Join(u.base, "ws/sub/proj"), 0o755)
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "hidden=0") {
				t.Fatalf("the first run did not make the directory unreadable: %s", out)
			}
			if !strings.Contains(out, "written=") {
				// Refused by the policy before it ran: the sandbox was not tested.
				t.Fatalf("mode %s: the write never ran in the sandbox:\n%s", mode, out)
			}
			if strings.Contains(string(data), "fsmonitor") || strings.Contains(out, "written=0") {
				t.Errorf("mode %s: the nested repository's config was written in the sandbox:\n%s\n%s", mode, data, out)
			}
		})
	}
	t.Run("twin", func(t *testing.T) {
		u := newAsUser(t)
		out := u.sh(`set -e; mkdir -p "$WS/junk/deep" "$HOME"; git init -q "$WS"
$W sh -c 'chmod 000 junk; echo hidden=$?'
$W sh -c 'echo ok > out; echo wrote=$?'`)
		if !strings.Contains(out, "hidden=0") || !strings.Contains(out, "wrote=0") {
			t.Fatalf("a run after an unreadable directory without a repository failed: %s", out)
		}
		if b, err := os.ReadFile(filepath.Join(u.base, "ws/out")); err != nil || string(b) != "ok\n" {
			t.Errorf("the twin's write: %q %v", b, err)
		}
	})
}

// A command cannot leave a protected name behind by filling a directory,
// making it mode 000 and renaming it to the name in one step: Warden took
// a mode-000 directory it could not list for an old Warden's empty
// placeholder and left it, and what it held (editor settings) was obeyed
// once anyone made it readable. It is looked into and moved away. The
// twin: an empty mode-000 directory at the name (an old placeholder) stays
// as it was, and the run succeeds.
func TestLockedDirectoryRenamedToAProtectedNameIsMovedAway(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`mkdir -p "$WS" "$HOME"; git init -q "$WS"
$W sh -c 'mkdir v && echo "{}" > v/settings.json && chmod 000 v && mv v .vscode && echo moved=$?; sleep 0.3'
$W sh -c 'mkdir -m 000 .idea && echo made=$?'`)
	if !strings.Contains(out, "moved=0") {
		t.Fatalf("the attack did not run: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(u.base, "ws/.vscode")); err == nil {
		t.Errorf("a filled mode-000 directory renamed to .vscode stayed in the workspace: %s", out)
	}
	if !strings.Contains(out, "removed .vscode") {
		t.Errorf("the removal of .vscode was not reported: %s", out)
	}
	st, err := os.Lstat(filepath.Join(u.base, "ws/.idea"))
	if !strings.Contains(out, "made=0") || err != nil || st.Mode().Perm() != 0 {
		t.Errorf("twin: an empty mode-000 .idea (an old placeholder) was not left as it was (%v, %v): %s", st, err, out)
	}
}
