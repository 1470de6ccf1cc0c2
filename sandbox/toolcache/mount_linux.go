package toolcache

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Mount mounts l's overlay on its target, in the caller's mount namespace
// (the sandbox helper's, owned by its user namespace: no privilege needed
// on a kernel that allows overlay there, 5.11 and later).
func Mount(l Layer) error {
	if err := unix.Mount("overlay", l.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, l.Options()); err != nil {
		return fmt.Errorf("overlay on %s: %w", l.Target, err)
	}
	return nil
}
