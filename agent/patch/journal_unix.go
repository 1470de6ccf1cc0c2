//go:build unix

package patch

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes f's exclusive lock without waiting; errLocked when another
// process holds it. The lock goes with the process: a killed Warden's
// journal is free to recover.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// syncDir makes the names created, renamed or removed in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
