package toolcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Tool is one toolchain cache: its directory under the set's data
// directory (the private layer) and the user's own cache.
type Tool struct {
	Name string // relative to the data directory, e.g. "go-build" or "cargo/registry"
	User string // absolute
}

// Layer is one overlay the sandbox helper mounts: Target shows Upper over
// Lower (the first entry on top), read-only below Upper.
type Layer struct {
	Target string   `json:"target"`
	Upper  string   `json:"upper"`
	Work   string   `json:"work"`
	Lower  []string `json:"lower"`
}

// Options is the overlay's mount data: user.* attributes, as an
// unprivileged mount needs, and no index (the set's lock, not the kernel,
// keeps one upper to one mount).
func (l Layer) Options() string {
	return "lowerdir=" + strings.Join(l.Lower, ":") + ",upperdir=" + l.Upper + ",workdir=" + l.Work + ",userxattr,index=off"
}

// The set's entries beside its data directory, out of the sandbox's reach.
const (
	lockFile = "layers.lock" // held by the run whose upper is the private layer
	workDir  = "layers-work" // that run's overlay work directories
	runsDir  = "layers-runs" // concurrent runs' scratch uppers, one directory each
	runLock  = "lock"
)

// Lease is one run's use of a set's layers, held until Release.
type Lease struct {
	Layers  []Layer
	Shared  bool // another run holds the private layer: writes go to a scratch upper
	lock    *os.File
	scratch string
}

// Take leases the layers of tools for one run of the set in dir, whose
// private caches are in data. Tools whose user cache is missing, or whose
// paths the overlay's options cannot carry, are left out (their private
// cache is used as it is). With no tools left the lease still holds a lock,
// which keeps eviction off the set until Release. The directories it needs are made here, by
// Warden, not in the sandbox.
func Take(dir, data string, tools []Tool) (*Lease, error) {
	real, err := filepath.EvalSymlinks(dir) // Warden's: the sandbox writes only data
	if err != nil {
		return nil, err
	}
	dir, data = real, filepath.Join(real, filepath.Base(data))
	tools = usable(data, tools)
	lock, held, err := tryLock(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, err
	}
	if held {
		removeStale(filepath.Join(dir, runsDir))
		return holderLease(dir, data, tools, lock)
	}
	return sharedLease(dir, data, tools)
}

// holderLease: the private layer is the upper, the user's cache below.
func holderLease(dir, data string, tools []Tool, lock *os.File) (*Lease, error) {
	l := &Lease{lock: lock}
	for _, t := range tools {
		upper, work := filepath.Join(data, t.Name), filepath.Join(dir, workDir, flat(t.Name))
		if err := mkdirs(work); err != nil {
			l.Release()
			return nil, err
		}
		l.Layers = append(l.Layers, Layer{Target: upper, Upper: upper, Work: work, Lower: []string{t.User}})
	}
	return l, nil
}

// sharedLease: the private layer read-only on the user's cache, under a
// scratch upper of this run's own.
func sharedLease(dir, data string, tools []Tool) (*Lease, error) {
	runs := filepath.Join(dir, runsDir)
	if err := os.MkdirAll(runs, 0o700); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(runs, "run-")
	if err != nil {
		return nil, err
	}
	lock, held, err := tryLock(filepath.Join(scratch, runLock))
	if err != nil || !held {
		os.RemoveAll(scratch)
		return nil, errors.Join(err, fmt.Errorf("lock %s: taken", scratch))
	}
	l := &Lease{Shared: true, lock: lock, scratch: scratch}
	for _, t := range tools {
		private := filepath.Join(data, t.Name)
		upper, work := filepath.Join(scratch, "upper", flat(t.Name)), filepath.Join(scratch, "work", flat(t.Name))
		if err := mkdirs(upper, work); err != nil {
			l.Release()
			return nil, err
		}
		l.Layers = append(l.Layers, Layer{Target: private, Upper: upper, Work: work, Lower: []string{private, t.User}})
	}
	return l, nil
}

// Release ends the lease: a scratch upper is removed, the lock let go.
func (l *Lease) Release() {
	if l == nil || l.lock == nil {
		return
	}
	if l.scratch != "" {
		RemoveTree(l.scratch)
	}
	unlock(l.lock)
	l.lock = nil
}

// usable keeps the tools whose user cache is a directory, its links
// resolved (the helper follows none), and whose private directory is one
// inside data, made there if missing: a run can plant links in data, and
// one that leads elsewhere leaves its tool unlayered (the helper checks
// again as it mounts).
func usable(data string, tools []Tool) []Tool {
	root, err := os.OpenRoot(data)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []Tool
	for _, t := range tools {
		if !filepath.IsAbs(t.User) || filepath.IsAbs(t.Name) || !filepath.IsLocal(t.Name) {
			continue
		}
		user, err := filepath.EvalSymlinks(t.User)
		if st, serr := os.Stat(user); err != nil || serr != nil || !st.IsDir() {
			continue
		}
		if root.MkdirAll(t.Name, 0o700) != nil || !plainDirs(data, t.Name) {
			continue
		}
		out = append(out, Tool{Name: t.Name, User: user})
	}
	return out
}

// plainDirs reports whether each element of name below dir is a directory,
// not a link.
func plainDirs(dir, name string) bool {
	for _, el := range strings.Split(name, "/") {
		dir = filepath.Join(dir, el)
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

func flat(name string) string { return strings.ReplaceAll(name, "/", "-") }

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("toolchain cache layer: %w", err)
		}
	}
	return nil
}

// removeStale removes the scratch uppers of runs that ended without
// Release (Warden killed): their lock is free.
func removeStale(runs string) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return
	}
	for _, e := range entries {
		d := filepath.Join(runs, e.Name())
		lock, held, err := tryLock(filepath.Join(d, runLock))
		if err != nil || !held {
			continue
		}
		RemoveTree(d)
		unlock(lock)
	}
}

// RemoveTree removes dir as clearTree empties it. A dir already gone is
// no error.
func RemoveTree(dir string) error {
	clearTree(dir) // what it could not remove, Remove reports
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
