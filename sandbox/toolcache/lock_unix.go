//go:build unix

package toolcache

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock opens path (made if missing, never through a link) and takes an
// exclusive lock on it without waiting: held is false when another run
// has it.
func tryLock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("toolchain cache lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("toolchain cache lock %s: %w", path, err)
	}
	return f, true, nil
}

// errNoLocks never happens here: runs lock their sets.
var errNoLocks = errors.New("no locks")

func unlock(f *os.File) {
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}
