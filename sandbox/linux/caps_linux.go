package linux

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Securebits that keep uid 0 from regaining capabilities at exec and lock
// that choice.
const secureBits = 1<<0 | 1<<1 | // SECBIT_NOROOT(+LOCKED)
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP(+LOCKED)
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE(+LOCKED)

// dropCapabilities empties this thread's bounding, ambient, effective,
// permitted and inheritable sets. Root inside the sandbox keeps dangerous
// powers otherwise (reading other processes' environ, mknod, TIOCSTI). The
// command is forked from this thread, so it starts with nothing, and the
// securebits make sure exec gives uid 0 nothing back.
func dropCapabilities(lastCap int) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted|data[1].Permitted != 0 {
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, secureBits, 0, 0, 0); err != nil {
			return fmt.Errorf("set securebits: %w", err)
		}
		for c := 0; c <= lastCap; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// lastCap is the highest capability number this kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63
}
