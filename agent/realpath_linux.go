package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// realPath is where the opened file f really is: the kernel's name for the
// descriptor, so a link changed after the open does not fool the check.
// Without /proc it falls back to resolving path.
func realPath(f *os.File, path string) string {
	var real string
	if rc, err := f.SyscallConn(); err == nil {
		// Control, not Fd: Fd would put a FIFO back into blocking mode.
		rc.Control(func(fd uintptr) {
			if r, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))); err == nil && filepath.IsAbs(r) {
				real = strings.TrimSuffix(r, " (deleted)")
			}
		})
	}
	if real != "" {
		return real
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return ""
}
