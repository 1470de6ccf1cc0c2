package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// hiddenFile is the empty file bound (read-only) over each hidden file. It
// is made in the sandbox's own /dev and unlinked once bound. Empty rather
// than unreadable: tools that read a config file holding a token (npm and
// ~/.npmrc, docker and ~/.docker/config.json) keep working without it.
const hiddenFile = "/dev/.warden-hidden"

// maskSecrets hides each path of the read policy: an empty mode-000 tmpfs
// over a directory (with read_allow exceptions bound back in), an empty
// read-only file over a file. Each target is opened without following any
// symbolic link, so a link planted since the launcher resolved it refuses
// the run instead of moving the mask. It returns the mount points, to be
// made read-only once the writable roots are.
func maskSecrets(secrets []HiddenPath) ([]string, error) {
	if len(secrets) == 0 {
		return nil, nil
	}
	var points []string
	haveFile := false
	defer func() {
		if haveFile {
			os.Remove(hiddenFile)
		}
	}()
	for _, h := range secrets {
		fd, err := unix.Openat2(unix.AT_FDCWD, h.Target, &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if errors.Is(err, unix.ENOENT) {
			continue // removed since the launcher looked: nothing left to read
		}
		if err != nil {
			return nil, fmt.Errorf("hide %s: %w (a symbolic link on its way changed since the sandbox looked)", h.Path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("hide %s: %w", h.Path, err)
		}
		at := "/proc/self/fd/" + strconv.Itoa(fd)
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if isDir {
			err = maskDir(at, h)
		} else {
			if !haveFile {
				if err = makeHiddenFile(); err == nil {
					haveFile = true
				}
			}
			if err == nil {
				err = unix.Mount(hiddenFile, at, "", unix.MS_BIND, "")
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("hide %s: %w", h.Path, err)
		}
		points = append(points, h.Target)
	}
	return points, nil
}

func makeHiddenFile() error {
	f, err := os.OpenFile(hiddenFile, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	return f.Close()
}

// maskDir mounts the empty tmpfs over the directory at (a /proc/self/fd
// path). Exceptions inside are cloned before the mask covers them, then
// bound onto entries made for them; the directories on their way can be
// crossed but not listed.
func maskDir(at string, h HiddenPath) error {
	const opts = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if len(h.Allow) == 0 {
		return unix.Mount("tmpfs", at, "tmpfs", opts|unix.MS_RDONLY, "mode=000,size=4k,nr_inodes=1")
	}
	type clone struct {
		rel string
		fd  int
		dir bool
	}
	var clones []clone
	defer func() {
		for _, c := range clones {
			unix.Close(c.fd)
		}
	}()
	for _, a := range h.Allow {
		fd, err := unix.OpenTree(unix.AT_FDCWD, a, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return fmt.Errorf("keep %s readable: %w", a, err)
		}
		var st unix.Stat_t
		unix.Fstat(fd, &st)
		rel, _ := filepath.Rel(h.Target, a)
		clones = append(clones, clone{rel, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	if err := unix.Mount("tmpfs", at, "tmpfs", opts, "mode=0700,size=64k,nr_inodes=256"); err != nil {
		return err
	}
	// The mount covers the old directory; reach the new one by its path.
	root := h.Target
	var dirs []string
	for _, c := range clones {
		dst := filepath.Join(root, c.rel)
		for d := filepath.Dir(dst); d != root; d = filepath.Dir(d) {
			dirs = append(dirs, d)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if c.dir {
			if err := os.Mkdir(dst, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
		} else if err := os.WriteFile(dst, nil, 0o600); err != nil {
			return err
		}
		if err := unix.MoveMount(c.fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("keep %s readable: %w", dst, err)
		}
	}
	for _, d := range append(dirs, root) {
		if err := os.Chmod(d, 0o111); err != nil {
			return err
		}
	}
	return nil
}
