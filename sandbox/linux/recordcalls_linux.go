package linux

import (
	"slices"

	"golang.org/x/sys/unix"
)

// The calls that can change a file tree by name, for the write record
// (recordwrites_linux.go): each names the paths it may create, write,
// remove, move or chmod, and how the kernel resolves each path's last
// component. Calls on a descriptor (write, ftruncate, fallocate) need
// none: a descriptor that can write came from a recorded open.

// lastLink says whether a path's last component is followed when it is a
// symbolic link.
type lastLink int

const (
	noFollow   lastLink = iota // unlink, rename, mkdir: the link itself
	follow                     // truncate, chmod: what it leads to
	openFollow                 // open: follows unless O_NOFOLLOW or O_CREAT|O_EXCL (flags)
	atFollow                   // linkat: follows with AT_SYMLINK_FOLLOW (flags)
	atNoFollow                 // fchmodat2: follows unless AT_SYMLINK_NOFOLLOW (flags)
)

// pathArg is one path a call names: the argument holding the directory
// it is relative to (-1: the working directory) and the one holding the
// path.
type pathArg struct {
	dirfd, path int
	last        lastLink
	// tree: the call may move a directory with everything it holds.
	tree bool
	// content: the call may change the file's bytes or mode, which every
	// other name of the file (a hard link) shows too.
	content bool
}

// recordedCall is one call the filter sends to the supervisor.
type recordedCall struct {
	// writeFlags, for the open calls, is the argument holding the open
	// flags: only an open that can write or create is sent (-1: always
	// sent).
	writeFlags int
	// flags is the argument holding the flags lastLink looks at (-1: none).
	flags int
	paths []pathArg
	// fd is the argument holding the descriptor of the file changed
	// (fchmod; -1: none).
	fd int
	// how: openat2, whose flags are in the struct open_how at args[2].
	how bool
}

// openWriteFlags are the open flags that can change a file (O_TMPFILE
// needs O_WRONLY or O_RDWR).
const openWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

func entry(dirfd, path int, last lastLink) pathArg {
	return pathArg{dirfd: dirfd, path: path, last: last}
}

func content(dirfd, path int, last lastLink) pathArg {
	return pathArg{dirfd: dirfd, path: path, last: last, content: true}
}

func moved(dirfd, path int) pathArg {
	return pathArg{dirfd: dirfd, path: path, last: noFollow, tree: true}
}

func onPaths(flags int, paths ...pathArg) recordedCall {
	return recordedCall{writeFlags: -1, flags: flags, fd: -1, paths: paths}
}

// atCalls are the calls both architectures have.
func atCalls() map[int]recordedCall {
	return map[int]recordedCall{
		unix.SYS_OPENAT:    {writeFlags: 2, flags: 2, fd: -1, paths: []pathArg{content(0, 1, openFollow)}},
		unix.SYS_OPENAT2:   {writeFlags: -1, flags: -1, fd: -1, how: true, paths: []pathArg{content(0, 1, openFollow)}},
		unix.SYS_TRUNCATE:  onPaths(-1, content(-1, 0, follow)),
		unix.SYS_UNLINKAT:  onPaths(-1, entry(0, 1, noFollow)),
		unix.SYS_RENAMEAT:  onPaths(-1, moved(0, 1), moved(2, 3)),
		unix.SYS_RENAMEAT2: onPaths(-1, moved(0, 1), moved(2, 3)),
		unix.SYS_MKDIRAT:   onPaths(-1, entry(0, 1, noFollow)),
		unix.SYS_MKNODAT:   onPaths(-1, entry(0, 1, noFollow)),
		unix.SYS_SYMLINKAT: onPaths(-1, entry(1, 2, noFollow)),
		unix.SYS_LINKAT:    onPaths(4, entry(0, 1, atFollow), entry(2, 3, noFollow)),
		unix.SYS_FCHMODAT:  onPaths(-1, content(0, 1, follow)),
		unix.SYS_FCHMODAT2: onPaths(3, content(0, 1, atNoFollow)),
		unix.SYS_FCHMOD:    {writeFlags: -1, flags: -1, fd: 0},
	}
}

// sortedCalls are the numbers of calls in order: the filter is the same
// program every time.
func sortedCalls(calls map[int]recordedCall) []int {
	nrs := make([]int, 0, len(calls))
	for nr := range calls {
		nrs = append(nrs, nr)
	}
	slices.Sort(nrs)
	return nrs
}
