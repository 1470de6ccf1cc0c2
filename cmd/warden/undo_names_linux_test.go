//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// writeToolEnv makes this test binary a tool that sandboxed commands run to
// change a file through a name the record must see through: inroot DIR
// REL (openat2 with RESOLVE_IN_ROOT), reopen FILE (an O_RDONLY descriptor
// reopened for writing through /proc/self/fd), fchmod FILE (a read-only
// descriptor's mode changed).
const writeToolEnv = "WARDEN_TEST_WRITETOOL"

func init() {
	if os.Getenv(writeToolEnv) == "1" && len(os.Args) >= 3 {
		if err := writeTool(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func writeTool(mode string, args []string) error {
	switch mode {
	case "inroot":
		dir, err := unix.Open(args[0], unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		fd, err := unix.Openat2(dir, "/"+args[1], &unix.OpenHow{Flags: unix.O_WRONLY | unix.O_TRUNC, Resolve: unix.RESOLVE_IN_ROOT})
		if err != nil {
			return err
		}
		_, err = unix.Write(fd, []byte("evil in root\n"))
		return err
	case "reopen":
		fd, err := unix.Open(args[0], unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		return os.WriteFile(fmt.Sprintf("/proc/self/fd/%d", fd), []byte("evil reopened\n"), 0o644)
	case "fchmod":
		fd, err := unix.Open(args[0], unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		return unix.Fchmod(fd, 0o777)
	}
	return fmt.Errorf("unknown mode")
}

// ATTACK: the record is only as good as its reading of each call's path. A
// command changes workspace files through names that are not their paths:
// openat2 with RESOLVE_IN_ROOT ("/x" below a directory descriptor), a
// read-only descriptor reopened for writing through /proc/self/fd (which,
// read by Warden's helper, would name the helper's own descriptor), and a
// chmod through a read-only descriptor. Each change must be recorded and
// undone. TWIN: the same files written by their plain names are (the
// other undo tests).
func TestUndoSeesThroughTheNamesACommandWritesBy(t *testing.T) {
	w := newCommandWorkspace(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		`"$0" inroot src a.go`,
		`"$0" reopen README.md`,
		`"$0" fchmod src/tool.sh`,
	}, " && ")
	cmd := exec.Command(wardenBin(t), "exec", "--cwd", w.dir, "--", "sh", "-c", script, self)
	cmd.Env = append(os.Environ(), writeToolEnv+"=1")
	_, stderr, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	for _, rel := range []string{"src/a.go", "README.md", "src/tool.sh"} {
		if !strings.Contains(stderr, rel) {
			t.Errorf("the outcome line should name %s:\n%s", rel, stderr)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(w.dir, "src/a.go")); string(data) != "evil in root\n" {
		t.Fatalf("the tool did not write src/a.go: %q", data)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, stderr)
	}
	w.check("after undo")
}
