//go:build unix

package rules

import (
	"os"
	"syscall"
)

// lockExclusive takes an exclusive advisory lock on f, waiting for others.
func lockExclusive(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
