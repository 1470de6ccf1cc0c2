//go:build !linux

package changes

import (
	"os"
	"path/filepath"
)

// readBeneath reads the file rel of root. Only Linux refuses a link on the
// way (openat2); elsewhere the record is made before and after the run,
// with no command running.
func readBeneath(root, rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
}

// pathBeneath names rel of root (see the Linux version: elsewhere the
// record is made with no command running).
func pathBeneath(root, rel string) (string, func()) {
	return filepath.Join(root, filepath.FromSlash(rel)), func() {}
}
