package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// devices are bound from the host into the sandbox's fresh /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// The helper's copy of the mount tree becomes the sandbox's view in two
// steps: prepareMountView does what every command shares, finishMountView
// what depends on the command's policy.

// prepareMountView mounts a fresh /proc for the new pid namespace and a
// minimal /dev. It runs before the spec is known (a spare helper runs it
// ahead of need), so it leaves mount propagation alone: a mount namespace
// made in a new user namespace receives the host's mounts and unmounts as a
// slave until finishMountView makes it private, so a spare's view does not go stale.
// It returns a detached clone of the host's /dev: the fresh /dev covers the
// host's, and a writable root below it (a directory on /dev/shm) is brought
// back from the clone once the spec names it.
func prepareMountView() (hostDev int, err error) {
	// Take the device nodes before a tmpfs covers /dev.
	devFDs := map[string]int{}
	for _, d := range devices {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/dev/"+d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			if d == "tty" {
				continue
			}
			return -1, fmt.Errorf("clone /dev/%s: %w", d, err)
		}
		devFDs[d] = fd
	}
	hostDev, err = unix.OpenTree(unix.AT_FDCWD, "/dev", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("clone /dev: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		unix.Close(hostDev)
		return -1, fmt.Errorf("mount a fresh /proc: %w", err)
	}
	if err := buildDev(devFDs); err != nil {
		unix.Close(hostDev)
		return -1, err
	}
	return hostDev, nil
}

// restoreDevRoots mounts each writable root below /dev from the host's /dev
// (hostDev) onto the sandbox's fresh /dev, where it does not exist
// otherwise. Without device nodes: a writable root holds files.
func restoreDevRoots(roots []protect.Root, hostDev int) error {
	if hostDev >= 0 {
		defer unix.Close(hostDev)
	}
	for _, r := range roots {
		if r.Path == "/dev" || !pathutil.Within("/dev", r.Path) {
			continue
		}
		if hostDev < 0 {
			return fmt.Errorf("writable root %s: the host's /dev is not at hand", r.Path)
		}
		fd, err := unix.OpenTree(hostDev, strings.TrimPrefix(r.Path, "/dev/"), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("clone writable root %s from the host's /dev: %w", r.Path, err)
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID})
		if err == nil {
			err = os.MkdirAll(r.Path, 0o755)
		}
		if err == nil {
			err = unix.MoveMount(fd, "", unix.AT_FDCWD, r.Path, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("mount writable root %s: %w", r.Path, err)
		}
	}
	return nil
}

// finishMountView turns the view into the sandbox's: everything read-only and
// nosuid, the writable roots writable, their existing protected subpaths
// read-only again (a missing one is watched by the launcher, see quarantine),
// existing unix sockets outside masked (spec.Sockets, found by the
// launcher), directories that may hold sockets but cannot be listed
// hidden, and the read policy's secrets masked (spec.Secrets).
func finishMountView(spec *Spec, hostDev int) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		unix.Close(hostDev)
		return fmt.Errorf("make / private: %w", err)
	}
	if err := restoreDevRoots(spec.Roots, hostDev); err != nil {
		return err
	}
	mountCacheLayers(spec.CacheLayers)
	for _, r := range spec.Roots {
		if err := bind(r.Path, r.Path); err != nil {
			return err
		}
	}
	protected, found, git, err := bindProtected(spec.Roots)
	if err != nil {
		return err
	}
	for _, s := range spec.Sockets {
		// connect() ignores read-only mounts, so cover the socket itself.
		err := unix.Mount("/dev/null", s, "", unix.MS_BIND, "")
		if errors.Is(err, unix.ENOENT) {
			// Its server went away after the scan: there is nothing left to
			// reach there, as with any socket created after this point.
			continue
		}
		if err != nil {
			return fmt.Errorf("mask socket %s: %w", s, err)
		}
	}
	for _, d := range spec.Hidden {
		// Listed by nobody, reachable by name: show an empty directory.
		err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=4k,nr_inodes=1")
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	// After every other mount, so nothing lands on top of a mask.
	secrets, err := maskSecrets(spec.Secrets)
	if err != nil {
		return err
	}

	limitPids(spec.Processes)

	all := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, all); err != nil {
		return fmt.Errorf("make / read-only: %w", err)
	}
	writable := append([]string{"/dev/shm", "/dev/pts"}, RootPaths(spec.Roots)...)
	for _, w := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			// A mount under the root that the host made read-only stays so.
			if err := unix.MountSetattr(unix.AT_FDCWD, w, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
				return fmt.Errorf("make %s writable: %w", w, err)
			}
		}
	}
	for _, p := range protected {
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	if err := reopenNested(spec.Roots, protected); err != nil {
		return err
	}
	for _, g := range git {
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if g.Writable {
			attr = &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, g.Path, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, attr); err != nil {
			return fmt.Errorf("split %s: %w", g.Path, err)
		}
	}
	if err := sealFound(found); err != nil {
		return err
	}
	for _, p := range secrets {
		// Inside a writable root the pass above made the mask writable.
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make the mask over %s read-only: %w", p, err)
		}
	}
	// The old working directory is under the mounts now; enter the new view.
	if err := unix.Chdir(spec.Cwd); err != nil {
		return fmt.Errorf("enter %s: %w", spec.Cwd, err)
	}
	return nil
}

// mountCacheLayers layers each toolchain cache on the user's, before the
// roots are bound (an overlay's upper and work directories must be in one
// mount; the roots' recursive binds carry the overlay along) and while the
// tree is still writable (the pass that makes / read-only covers the
// overlay too, and the writable root holding it opens it again).
// A mount the kernel refuses leaves the private cache under it as it is,
// which is where every write lands either way.
func mountCacheLayers(layers []toolcache.Layer) {
	for _, l := range layers {
		toolcache.Mount(l)
	}
}

// reopenNested makes each root that lies in a read-only path of another
// (the toolchain caches under a home's ~/.cache, a home_writable entry such
// as .cache/foo, a configured root that is a home dot-entry) writable again,
// and its own protected paths read-only again. Roots are sorted, the
// outer first.
func reopenNested(roots []protect.Root, protected []string) error {
	for _, r := range roots {
		if !slices.ContainsFunc(protected, func(p string) bool { return pathutil.Within(p, r.Path) }) {
			continue
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, r.Path, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s writable inside a read-only path: %w", r.Path, err)
		}
		for _, p := range protected {
			if p != r.Path && pathutil.Within(r.Path, p) {
				if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
					return fmt.Errorf("make %s read-only: %w", p, err)
				}
			}
		}
	}
	return nil
}

// bindProtected makes each existing protected path and each repository
// found a mount point, to be made read-only once the
// roots are writable. The directories between a root and a deeper protected
// path or found repository are pinned (bound onto themselves, still
// writable): a mount point cannot be renamed or removed, so the command
// cannot move ~/.config away and make a new, writable ~/.config/warden in its
// place, nor move a repository below a flood of directories where the next
// run's scan, cut by its bound, would not find it (see repos_known.go).
// Shared ancestors are pinned once.
func bindProtected(roots []protect.Root) (protected, found []string, git []protect.GitPath, err error) {
	pinned := map[string]bool{}
	hold := func(r protect.Root, point string, pin bool, into *[]string) error {
		if pin && pathutil.Within(r.Path, point) {
			var chain []string
			for dir := filepath.Dir(point); dir != r.Path && pathutil.Within(r.Path, dir) && !pinned[dir]; dir = filepath.Dir(dir) {
				chain = append(chain, dir)
			}
			// Shallowest first: a recursive bind of a directory copies the
			// mounts below it, so pinning bottom-up would stack copies.
			for i := len(chain) - 1; i >= 0; i-- {
				if err := bind(chain[i], chain[i]); err != nil {
					return err
				}
				pinned[chain[i]] = true
			}
		}
		if err := bind(point, point); err != nil {
			return err
		}
		*into = append(*into, point)
		return nil
	}
	for _, r := range roots {
		// Only those that existed when the launcher looked (helperRoots):
		// the launcher moves away a missing one the command makes.
		for _, p := range r.Protected {
			if _, err := os.Lstat(p); err != nil {
				if pathutil.Within(r.Path, p) {
					// It existed when the launcher looked, so nobody watches
					// the name: refuse, never skip.
					return nil, nil, nil, fmt.Errorf("protected path %s %s", p, Vanished)
				}
				continue // a gitdir target elsewhere that is gone: nothing to protect
			}
			if err := hold(r, p, true, &protected); err != nil {
				return nil, nil, nil, err
			}
		}
		for _, p := range r.Found {
			if _, err := os.Lstat(p); err != nil {
				continue // gone since the scan: a new one is the command's own
			}
			if err := hold(r, p, true, &found); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue // removed by its owner meanwhile (a shared /tmp)
				}
				return nil, nil, nil, err
			}
		}
		held, err := bindGit(r, hold)
		if err != nil {
			return nil, nil, nil, err
		}
		git = append(git, held...)
	}
	return protected, found, git, nil
}

// bindGit makes each entry of the root's git dirs' split a mount point:
// the git dirs themselves so they cannot be renamed and replaced (the top
// one with its parents pinned), their read-only entries so they cannot be
// removed and made anew. A git dir found below the root that is gone is
// skipped; a read-only entry that is gone sends the run back to the
// launcher to be set up again (its name could be created unwatched).
// Missing entries are watched by the launcher.
func bindGit(r protect.Root, hold func(protect.Root, string, bool, *[]string) error) ([]protect.GitPath, error) {
	var held []protect.GitPath
	var points []string
	gone := ""
	top := filepath.Join(r.Path, ".git")
	target, _ := gitconfig.GitdirTarget(top, nil)
	for _, g := range r.Git {
		if g.Missing || (gone != "" && pathutil.Within(gone, g.Path)) {
			continue
		}
		isTop := g.Path == top || g.Path == target
		// A git dir (not an entry of one held before) has the directories
		// above it pinned: see bindProtected.
		pin := isTop || !slices.ContainsFunc(held, func(h protect.GitPath) bool { return pathutil.Within(h.Path, g.Path) })
		err := hold(r, g.Path, pin, &points)
		if errors.Is(err, unix.ENOENT) && g.Writable && !isTop {
			gone = g.Path
			continue
		}
		if errors.Is(err, unix.ENOENT) {
			// Removed since the launcher looked (a placeholder another
			// run released): the launcher sets the run up again.
			return nil, fmt.Errorf("git dir entry %s %s", g.Path, Vanished)
		}
		if err != nil {
			return nil, fmt.Errorf("hold the git dir's entry: %w", err)
		}
		held = append(held, g)
	}
	return held, nil
}

// Vanished says a protected path went away between the launcher's look and
// the helper's mount (another process removed it, as in a shared /tmp): the
// launcher sets the run up again.
const Vanished = "vanished before it could be held read-only"

// sealFound makes each repository the scan found read-only. In a shared
// /tmp its owner may remove it after the bind, and the bind goes with it:
// the name is then gone (ENOENT) or names something new that is no mount
// point (EINVAL). Neither can be reached through the bind, and a new one at
// that name is like any made after the scan (the command's own, or moved
// away after a run in the workspace). Anything else refuses the run.
func sealFound(found []string) error {
	for _, p := range found {
		err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		switch {
		case err == nil, errors.Is(err, unix.ENOENT):
		case errors.Is(err, unix.EINVAL) && notMountRoot(p):
		default:
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// notMountRoot says whether p is known not to be the root of a mount
// (statx's STATX_ATTR_MOUNT_ROOT); false when the kernel cannot say.
func notMountRoot(p string) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, 0, &st); err != nil {
		return errors.Is(err, unix.ENOENT)
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0
}

func bind(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return nil
}

func RootPaths(roots []protect.Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// buildDev mounts a small tmpfs on /dev with the basic devices, a private
// devpts and a private /dev/shm.
func buildDev(devFDs map[string]int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range devices {
		fd, ok := devFDs[d]
		if !ok {
			continue
		}
		target := "/dev/" + d
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("create %s: %w", target, err)
		}
		f.Close()
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s: %w", target, err)
		}
		unix.Close(fd)
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx",
	} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// limitPids caps the pid numbers of the sandbox's pid namespace (Linux 6.14
// made pid_max per namespace; the kernel's minimum is 301). RLIMIT_NPROC
// does not bind processes whose real user is host root, so for root this is
// what stops a fork bomb. Older kernels refuse the write; RLIMIT_NPROC then
// remains the only bound.
func limitPids(processes int64) {
	if processes <= 0 {
		return
	}
	n := max(processes, 301)
	os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.FormatInt(n, 10)), 0)
}
