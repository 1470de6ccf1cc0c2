package linux

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// KernelInfo is what the running kernel offers the sandbox.
type KernelInfo struct {
	OS     string `json:"os"`
	Kernel string `json:"kernel"`
	// LandlockABI is the Landlock ABI version (0: none). LandlockErrata is
	// its errata bitmask.
	LandlockABI    int  `json:"landlock_abi"`
	LandlockErrata int  `json:"landlock_errata"`
	Seccomp        bool `json:"seccomp"`      // seccomp filters (SECCOMP_SET_MODE_FILTER)
	NoNewPrivs     bool `json:"no_new_privs"` // already set on this process
	Root           bool `json:"root"`
}

var (
	probeOnce sync.Once
	probed    KernelInfo
)

// Probe reads the kernel's sandboxing features once (cheap: no processes).
func Probe() KernelInfo {
	probeOnce.Do(func() {
		var uts unix.Utsname
		unix.Uname(&uts)
		probed.OS = "linux"
		probed.Kernel = unix.ByteSliceToString(uts.Release[:])
		if v, err := llsys.LandlockGetABIVersion(); err == nil {
			probed.LandlockABI = v
			if e, err := llsys.LandlockGetErrata(); err == nil {
				probed.LandlockErrata = e
			}
		}
		// A filter-mode call with a nil program fails with EFAULT when
		// filters are supported and EINVAL when they are not.
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, 0)
		probed.Seccomp = errno == unix.EFAULT
		if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err == nil {
			probed.NoNewPrivs = v == 1
		}
		probed.Root = os.Geteuid() == 0
	})
	return probed
}

// ProbeNamespaces tries to create each namespace the helper uses, by
// starting /bin/true (or the given program) inside it. It costs a few
// processes, so doctor calls it, not every run.
func ProbeNamespaces(program string) map[string]string {
	if program == "" {
		program = "/bin/true"
	}
	uid, gid := os.Getuid(), os.Getgid()
	try := func(flags uintptr) string {
		cmd := exec.Command(program)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER | flags,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		}
		if err := cmd.Run(); err != nil {
			return strings.TrimPrefix(err.Error(), "fork/exec "+program+": ")
		}
		return ""
	}
	return map[string]string{
		"user":  try(0),
		"mount": try(unix.CLONE_NEWNS),
		"pid":   try(unix.CLONE_NEWPID),
		"net":   try(unix.CLONE_NEWNET),
		"ipc":   try(unix.CLONE_NEWIPC),
	}
}
