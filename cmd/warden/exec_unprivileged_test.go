//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The sandbox must work for an ordinary user, not only for root: exec drops
// a non-root user's capabilities even inside its own user namespace. Run as
// root, this test runs warden exec as nobody.
func TestExecAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user (as an unprivileged user the other exec tests cover it)")
	}
	dir, err := os.MkdirTemp("", "warden-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "warden")
	data, err := os.ReadFile(wardenBin(t))
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	for _, err := range []error{os.WriteFile(bin, data, 0o755), os.Mkdir(ws, 0o777), os.Chmod(dir, 0o755)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(ws, 0o777)
	cmd := exec.Command(bin, "exec", "--approval", "never", "--cwd", ws, "--", "sh", "-c",
		`id -u; echo ok > inside && ! echo x 2>/dev/null > /etc/warden-nobody && ! mkdir .git/x 2>/dev/null && grep -q 'CapEff:.0000000000000000' /proc/self/status`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "XDG_CONFIG_HOME=" + ws, "XDG_STATE_HOME=" + ws}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	// Separate buffers: the command's stdout and stderr reach warden through
	// two pipes, so their interleaving in one buffer is down to scheduling.
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("warden exec as nobody: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.HasPrefix(out.String(), "65534\n") {
		t.Errorf("ran as %q (stderr %q)", out.String(), errOut.String())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "inside")); string(b) != "ok\n" {
		t.Errorf("write inside the workspace: %q", b)
	}
}
