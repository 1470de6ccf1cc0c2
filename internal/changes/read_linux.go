package changes

import (
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// readBeneath reads the file rel of root without following a link on the
// way or at the end, and without leaving root. The paths Warden reads are
// the ones it listed or the sandbox reported, which had no link in them;
// one that has one now was swapped by a command still running (a directory
// replaced by a link to ~/.ssh), and reading through it would copy a file
// the command may not read into the store, and undo would write it back
// into the workspace.
func readBeneath(root, rel string) ([]byte, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(dir, filepath.FromSlash(rel), &how)
	if err == unix.ENOSYS {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) // before 5.6: no openat2
	}
	if err != nil {
		if err == unix.ELOOP || err == unix.EXDEV {
			err = errSwapped
		}
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return io.ReadAll(f)
}

// pathBeneath names rel of root by a path with no link on the way to its
// last component (the directory above it held open, /proc/self/fd/N/NAME),
// for an lstat, a readlink or an open that must not leave the tree through
// a link a running command put in a directory's place. It is "" when the
// way to rel holds a link or nothing (rel is then no entry of the tree);
// done releases it.
func pathBeneath(root, rel string) (p string, done func()) {
	none := func() {}
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", none
	}
	parent, name := filepath.Split(filepath.FromSlash(rel))
	if parent != "" {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		sub, err := unix.Openat2(dir, parent, &how)
		unix.Close(dir)
		if err == unix.ENOSYS {
			return filepath.Join(root, filepath.FromSlash(rel)), none // before 5.6
		}
		if err != nil {
			return "", none
		}
		dir = sub
	}
	return "/proc/self/fd/" + strconv.Itoa(dir) + "/" + name, func() { unix.Close(dir) }
}
