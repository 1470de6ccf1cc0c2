package linux

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// resolveFor finds what a trapped call's path names, as the caller's
// kernel would: relative to its working directory or the directory dirfd
// (of the caller's table), absolute paths from its root (or from dirfd
// under RESOLVE_IN_ROOT), links followed with /proc/self meaning the
// caller. The result is the path of the entry the call acts on as this
// process sees it (the helper shares the caller's mount namespace and
// root), or "" when that is nothing with a name (an O_TMPFILE's). An
// error is the one the call would fail with.
func resolveFor(tid, dirfd int, p string, followLast, inRoot, emptyPath bool) (string, unix.Errno) {
	proc := "/proc/" + strconv.Itoa(tid)
	start := proc + "/cwd"
	if dirfd != unix.AT_FDCWD {
		start = proc + "/fd/" + strconv.Itoa(dirfd)
	}
	if p == "" && !emptyPath {
		return "", unix.ENOENT
	}
	startFD := unix.AT_FDCWD // an absolute path needs no start: the helper shares the caller's root
	if !strings.HasPrefix(p, "/") || inRoot || p == "" {
		fd, err := unix.Open(start, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", unix.EBADF
		}
		defer unix.Close(fd)
		startFD = fd
	}
	if p == "" {
		return fdPath(startFD)
	}
	dir, name, errno := quickResolve(startFD, p, followLast, inRoot)
	if errno == unix.ELOOP || errno == unix.ENOSYS {
		// A magic link on the way (/proc/self/fd/N, /dev/stdout), or a
		// link at the end: one component at a time, self meaning the caller.
		rootPath := proc + "/root"
		if inRoot {
			rootPath = start
		}
		root, err := unix.Open(rootPath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", unix.ESRCH
		}
		defer unix.Close(root)
		r := &resolver{root: root, tgid: pidOfThread(tid), tid: tid}
		dir, name, errno = r.resolve(startFD, p, followLast)
	}
	if errno != 0 {
		return "", errno
	}
	defer unix.Close(dir)
	at, errno := fdPath(dir)
	if errno != 0 || name == "" {
		return at, errno
	}
	if at == "/" {
		return "/" + name, 0
	}
	return at + "/" + name, 0
}

// quickResolve lets the kernel walk to the directory holding the path's
// last entry in one call, refusing magic links (which it would follow
// for this process, not the caller): ELOOP sends the caller to the
// component walk, as does a link to be followed at the end.
func quickResolve(start int, p string, followLast, inRoot bool) (int, string, unix.Errno) {
	if strings.HasSuffix(p, "/") {
		followLast = true
	}
	trimmed := strings.TrimRight(p, "/")
	cut := strings.LastIndexByte(trimmed, '/')
	parent, name := ".", trimmed
	if cut >= 0 {
		parent, name = trimmed[:cut], trimmed[cut+1:]
		if parent == "" {
			parent = "/"
		}
	}
	if name == "" || name == "." || name == ".." {
		return -1, "", unix.ENOSYS // "/", "dir/.": the walk knows
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if inRoot {
		how.Resolve |= unix.RESOLVE_IN_ROOT
	}
	dir, err := unix.Openat2(start, parent, &how)
	if err != nil {
		return -1, "", errnoOf(err, unix.ENOENT)
	}
	if followLast {
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(dir)
			return -1, "", unix.ELOOP
		}
	}
	return dir, name, 0
}

// fdPath is the path of what an O_PATH descriptor holds, "" for what has
// none (deleted, or not a file of any tree).
func fdPath(fd int) (string, unix.Errno) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", unix.EBADF
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", 0
	}
	return p, 0
}

// resolver walks a path one component at a time.
type resolver struct {
	root      int // where "/" and ".." at the top lead
	tgid, tid int // who /proc/self and /proc/thread-self are
	links     int
}

// maxLinks is the kernel's limit of links followed in one lookup.
const maxLinks = 40

// resolve returns the directory holding the path's last entry and that
// entry's name, or (name "") what the path names itself, as a descriptor
// the caller closes.
func (r *resolver) resolve(start int, p string, followLast bool) (int, string, unix.Errno) {
	from := start
	if strings.HasPrefix(p, "/") {
		from = r.root
	}
	cur, err := unix.Dup(from)
	if err != nil {
		return -1, "", unix.EMFILE
	}
	if strings.HasSuffix(p, "/") {
		followLast = true // "dir/" names the directory a link leads to
	}
	todo := components(p)
	fail := func(e unix.Errno) (int, string, unix.Errno) {
		unix.Close(cur)
		return -1, "", e
	}
	step := func(next int, err error) unix.Errno {
		if err != nil {
			return errnoOf(err, unix.ENOENT)
		}
		unix.Close(cur)
		cur = next
		return 0
	}
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		last := len(todo) == 0
		switch comp {
		case ".":
			continue
		case "..":
			if !sameFile(cur, r.root) {
				if e := step(unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)); e != 0 {
					return fail(e)
				}
			}
			continue
		}
		if last && !followLast {
			return cur, comp, 0
		}
		if (comp == "self" || comp == "thread-self") && procRoot(cur) {
			switch comp {
			case "self":
				todo = append([]string{strconv.Itoa(r.tgid)}, todo...)
				continue
			case "thread-self":
				todo = append([]string{strconv.Itoa(r.tgid), "task", strconv.Itoa(r.tid)}, todo...)
				continue
			}
		}
		var st unix.Stat_t
		if err := unix.Fstatat(cur, comp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT && last {
				return cur, comp, 0 // to be made
			}
			return fail(errnoOf(err, unix.ENOENT))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if inProc(cur) && !procRoot(cur) {
				// /proc/PID/fd/N, cwd, root: the kernel's own jump, made
				// for the caller's pid (self was replaced above).
				if e := step(unix.Openat(cur, comp, unix.O_PATH|unix.O_CLOEXEC, 0)); e != 0 {
					return fail(e)
				}
				if last {
					return cur, "", 0
				}
				continue
			}
			if r.links++; r.links > maxLinks {
				return fail(unix.ELOOP)
			}
			target, err := readlinkat(cur, comp)
			if err != nil {
				return fail(errnoOf(err, unix.ENOENT))
			}
			if strings.HasPrefix(target, "/") {
				if e := step(unix.Dup(r.root)); e != 0 {
					return fail(e)
				}
			}
			more := components(target)
			if len(more) == 0 && last {
				return cur, "", 0
			}
			todo = append(more, todo...)
			continue
		}
		if last {
			return cur, comp, 0
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fail(unix.ENOTDIR)
		}
		if e := step(unix.Openat(cur, comp, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)); e != 0 {
			return fail(e)
		}
	}
	return cur, "", 0
}

// components splits a path into its names ("a//b/" is a, b).
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

func inProc(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// procRoot reports the top of a proc file system (its root's inode is 1).
func procRoot(fd int) bool {
	var st unix.Stat_t
	return inProc(fd) && unix.Fstat(fd, &st) == nil && st.Ino == 1
}
