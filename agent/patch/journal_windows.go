//go:build windows

package patch

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes f's exclusive lock without waiting; errLocked when another
// process holds it. Windows releases the lock when the process ends.
func tryLock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
		return errLocked
	}
	return err
}

// syncDir is nothing on Windows: a directory cannot be opened for flushing,
// and NTFS journals its names itself.
func syncDir(string) error { return nil }
