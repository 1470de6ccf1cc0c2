//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sockToolEnv makes this test binary a small tool that sandboxed commands
// run: fill DIR N, dead DIR N, dial PATH, roundtrip PATH.
const sockToolEnv = "WARDEN_TEST_SOCKTOOL"

func init() {
	if os.Getenv(sockToolEnv) == "1" && len(os.Args) >= 3 {
		os.Exit(sockTool(os.Args[1], os.Args[2:]))
	}
}

func sockTool(mode string, args []string) int {
	fail := func(err error) int { fmt.Fprintf(os.Stderr, "%s: %v\n", mode, err); return 1 }
	switch mode {
	case "fill", "dead": // N empty files, or N socket files nobody listens on
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			p := filepath.Join(args[0], fmt.Sprintf("%s%06d", mode, i))
			if mode == "fill" {
				if err := unix.Mknod(p, unix.S_IFREG|0o600, 0); err != nil {
					return fail(err)
				}
				continue
			}
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				return fail(err)
			}
			err = unix.Bind(fd, &unix.SockaddrUnix{Name: p})
			unix.Close(fd)
			if err != nil {
				return fail(err)
			}
		}
		return 0
	case "dial":
		c, err := net.Dial("unix", args[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "dial: %v\n", err)
			return 3
		}
		c.Close()
		return 0
	case "roundtrip": // a socket the command binds itself
		l, err := net.Listen("unix", args[0])
		if err != nil {
			return fail(err)
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("ok"))
				c.Close()
			}
		}()
		c, err := net.Dial("unix", args[0])
		if err != nil {
			return fail(err)
		}
		defer c.Close()
		b := make([]byte, 2)
		if _, err := c.Read(b); err != nil || string(b) != "ok" {
			return fail(fmt.Errorf("read %q: %v", b, err))
		}
		return 0
	}
	return 2
}

// floodDir is a writable root to fill with many files: a tmpfs of its own
// when the test may mount one (this machine's /tmp may be a slow disk).
func floodDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Getuid() == 0 && unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256m,nr_inodes=1000000,mode=0755") == nil {
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	}
	return dir
}

// serveUnix listens on p outside the sandbox, as a service does, until the
// test ends.
func serveUnix(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestSocketScanFloodDoesNotDisableLaterRuns: a sandboxed command fills its
// temporary directory (a writable root the socket scan reads) with more
// entries than the scan used to allow, and with socket files nobody
// listens on. The next `warden exec` still runs (it used to exit 77), the
// services' sockets placed there before are still masked, and a socket the
// command binds itself still works.
func TestSocketScanFloodDoesNotDisableLaterRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 200,001 files")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tmp, ws := floodDir(t), t.TempDir()
	services := []string{filepath.Join(tmp, ".s.PGSQL.5432"), filepath.Join(tmp, "tmux-0", "default")}
	for _, p := range services {
		serveUnix(t, p)
	}
	exec1 := func(args ...string) (string, int, time.Duration) {
		t.Helper()
		cmd := exec.Command(wardenBin(t), append([]string{"exec", "--approval", "never", "--cwd", ws, "--"}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, sockToolEnv+"=1")
		start := time.Now()
		_, stderr, code := runCmd(t, cmd)
		return stderr, code, time.Since(start)
	}

	// The attack: 200,001 files and 1,000 dead sockets in $TMPDIR.
	if stderr, code, d := exec1("sh", "-c", `"$0" fill "$TMPDIR" 200001 && "$0" dead "$TMPDIR" 1000`, self); code != 0 {
		t.Fatalf("filling $TMPDIR: exit %d after %s: %s", code, d, stderr)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil || len(entries) < 201_001 {
		t.Fatalf("the flood did not land: %d entries, %v", len(entries), err)
	}

	// The next runs still run.
	stderr, code, d := exec1("true")
	if code != 0 {
		t.Fatalf("the run after the flood: exit %d (77 is a refusal): %s", code, stderr)
	}
	t.Logf("first run after the flood (cold scan, in a new process): %s", d)
	// The services' sockets stay masked: the command runs (not 77) and its
	// connect fails (3).
	for _, p := range services {
		if stderr, code, _ := exec1(self, "dial", p); code != 3 {
			t.Errorf("dial %s from the sandbox after the flood: exit %d, want 3 (connect failed): %s", p, code, stderr)
		}
	}
	// Twin: a socket the command binds itself works.
	if stderr, code, _ := exec1(self, "roundtrip", filepath.Join(tmp, "mine.sock")); code != 0 {
		t.Errorf("a socket the sandboxed command binds itself: exit %d: %s", code, stderr)
	}
	// Twin: outside the sandbox the services still answer.
	for _, p := range services {
		c, err := net.Dial("unix", p)
		if err != nil {
			t.Errorf("dial %s outside the sandbox: %v", p, err)
			continue
		}
		c.Close()
	}
}
