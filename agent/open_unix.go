//go:build unix

package agent

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without blocking on a FIFO or a
// device: what it is is checked after the open.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
