package toolcache

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount mounts l's overlay on its target, in the caller's mount namespace
// (the sandbox helper's, owned by its user namespace: no privilege needed
// on a kernel that allows overlay there, 5.11 and later).
//
// The overlay writes its upper directory with the rights of whoever
// mounted it, past the sandbox's read-only mounts and Landlock rules, and a
// sandboxed run can plant links in the private caches: each directory is
// opened without following any link (its path is resolved already) and
// named to the kernel by that descriptor, so the layer the overlay writes
// is the one checked, and the target the same directory as the upper.
func Mount(l Layer) error {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	open := func(p string) (string, error) {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS,
		})
		if err != nil {
			return "", fmt.Errorf("layer %s: %w", p, err)
		}
		fds = append(fds, fd)
		return "/proc/self/fd/" + strconv.Itoa(fd), nil
	}
	var byFD Layer
	var err error
	if byFD.Target, err = open(l.Target); err != nil {
		return err
	}
	byFD.Upper = byFD.Target
	if l.Upper != l.Target {
		if byFD.Upper, err = open(l.Upper); err != nil {
			return err
		}
	}
	if byFD.Work, err = open(l.Work); err != nil {
		return err
	}
	for _, lower := range l.Lower {
		p, err := open(lower)
		if err != nil {
			return err
		}
		byFD.Lower = append(byFD.Lower, p)
	}
	if err := unix.Mount("overlay", byFD.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, byFD.Options()); err != nil {
		return fmt.Errorf("overlay on %s (upper %s, lower %s): %w", l.Target, l.Upper, strings.Join(l.Lower, ":"), err)
	}
	return nil
}
