//go:build !linux && !darwin

package changes

import "os"

// processAlive reports whether process pid runs: elsewhere (Windows)
// finding a process opens it, which fails once it has exited.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
