package toolcache

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// overlayProbeArg is argv[1] of the hidden process ProbeOverlay starts:
// it mounts one overlay in fresh user and mount namespaces, as the helper
// mounts the toolchain cache layers, and exits.
const overlayProbeArg = "__overlay-probe"

func init() {
	if len(os.Args) == 3 && os.Args[1] == overlayProbeArg {
		overlayProbeMain(os.Args[2])
	}
}

func overlayProbeMain(dir string) {
	j := func(n string) string { return filepath.Join(dir, n) }
	if err := Mount(Layer{Target: j("upper"), Upper: j("upper"), Work: j("work"), Lower: []string{j("lower")}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ProbeOverlay reports whether the sandbox can layer the toolchain caches
// on the user's: "" when an unprivileged overlay mounts in a user and mount
// namespace, else why not. It starts a process, so doctor calls it, not
// every run.
func ProbeOverlay(program string) string {
	if program == "" {
		var err error
		if program, err = os.Executable(); err != nil {
			return err.Error()
		}
	}
	dir, err := os.MkdirTemp("", "warden-overlay-probe-")
	if err != nil {
		return err.Error()
	}
	defer RemoveTree(dir)
	for _, d := range []string{"lower", "upper", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return err.Error()
		}
	}
	cmd := exec.Command(program, overlayProbeArg, dir)
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return msg
		}
		return err.Error()
	}
	return ""
}
