package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockHides is what the Landlock rules must leave unreadable: the read
// policy's hidden paths when no mount namespace masks them.
func landlockHides(spec *Spec) []HiddenPath {
	if spec.Layers.Namespaces || len(spec.Secrets) == 0 {
		return nil
	}
	return spec.Secrets
}

// addReadsAround grants reads of grants (nil: every top-level entry but
// /dev) except the hidden paths, for a sandbox without a mount namespace to
// mask them in. Landlock is an allow-list whose rule on a directory grants
// everything beneath it, so a grant that holds a hidden path is split: each
// directory on the way down to it may only be listed, and each of its other
// entries is granted whole. Links are not followed: one is reached through
// its target, which the rules there decide; and a read_allow exception
// inside a hidden directory is granted on its own. What is listed here is
// what exists now: an entry created later in a split directory stays
// unreadable, which takes access away, never gives it.
func (b *landlockBase) addReadsAround(grants []string, hide []HiddenPath) error {
	if grants == nil {
		entries, err := os.ReadDir("/")
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Name() != "dev" {
				grants = append(grants, "/"+e.Name())
			}
		}
	}
	var targets, allows []string
	for _, h := range hide {
		targets = append(targets, h.Target)
		allows = append(allows, h.Allow...)
	}
	for _, g := range grants {
		real, err := filepath.EvalSymlinks(g)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("resolve %s: %w", g, err)
		}
		if hiddenAt(real, targets) {
			continue // a readable path inside a hidden one stays hidden
		}
		if below := pathsUnder(real, targets); len(below) > 0 {
			err = b.addSplit(real, below)
		} else {
			err = b.add(real, llRead, true)
		}
		if err != nil {
			return err
		}
	}
	for _, a := range allows {
		if err := b.addEntry(unix.AT_FDCWD, a, a); err != nil {
			return err
		}
	}
	return nil
}

// addSplit grants dir's listing and reads of its entries but hidden, and
// goes down into an entry that holds one. The directory listed is the one
// granted (one descriptor), and each entry is opened from it.
func (b *landlockBase) addSplit(dir string, hidden []string) error {
	if slices.Contains(hidden, dir) {
		return nil
	}
	fd, err := openExact(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil // a link on the way (or no directory): nothing to grant
	}
	if err != nil {
		return fmt.Errorf("open %s, to grant reads around what the read policy hides: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	if err := b.rule(fd, dir, ll.AccessFSReadDir); err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("list %s, to grant reads around what the read policy hides: %w", dir, err)
	}
	prefix := dir + "/"
	for _, e := range entries {
		p := prefix + e.Name()
		below := pathsUnder(p, hidden)
		switch {
		case e.Type()&fs.ModeSymlink != 0, slices.Contains(below, p):
		case len(below) > 0:
			err = b.addSplit(p, below)
		default:
			err = b.addEntry(fd, e.Name(), p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addEntry grants reads beneath the entry name of the directory open at
// dirfd (path names it), never through a link: one put in the place of
// what was listed grants nothing.
func (b *landlockBase) addEntry(dirfd int, name, path string) error {
	fd, err := openExact(dirfd, name, unix.O_PATH)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s for a rule: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for a rule: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil
	}
	return b.rule(fd, path, llRead)
}

// openExact opens path (relative to dirfd) following no link on the way
// or at its end (a link at its end opens as itself with O_PATH, ELOOP
// otherwise).
func openExact(dirfd int, path string, flags int) (int, error) {
	return unix.Openat2(dirfd, path, &unix.OpenHow{
		Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// hiddenAt reports whether p lies inside one of the hidden paths.
func hiddenAt(p string, hidden []string) bool {
	for _, h := range hidden {
		if strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

// pathsUnder are the paths of list at or below dir.
func pathsUnder(dir string, list []string) []string {
	var out []string
	for _, p := range list {
		if strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/') {
			out = append(out, p)
		}
	}
	return out
}
