package toolcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A cache root holds one cache set per workspace: ROOT/NAME-HASH/, with the
// sandbox-writable caches in data/ and Warden's records of the set beside
// it, outside the sandbox's reach (last-used, workspace).
const (
	lastUsedFile  = "last-used"
	workspaceFile = "workspace"
	evictedFile   = ".evicted"
	// removingPrefix names a set moved aside to be removed; set names
	// never start with a dot.
	removingPrefix = ".removing-"
	// evictEvery is how often at most a run looks at the sizes.
	evictEvery = time.Minute
)

// Set is one workspace's private caches.
type Set struct {
	Dir       string    `json:"dir"`
	Workspace string    `json:"workspace"`
	Size      int64     `json:"size"`
	LastUsed  time.Time `json:"last_used"`
}

// SetDir is the cache set of workspace (absolute, links resolved) under
// root: its base name, readable, and a hash of the whole path, so two
// checkouts named alike never share a set.
func SetDir(root, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, filepath.Base(workspace))
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "._")
	if name == "" {
		name = "root"
	}
	return filepath.Join(root, name+"-"+hex.EncodeToString(sum[:8]))
}

// ListSets lists the sets under root with their sizes, least recently
// used first. A missing root has none.
func ListSets(root string) ([]Set, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sets []Set
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		st, err := os.Lstat(filepath.Join(dir, lastUsedFile))
		if err != nil || !st.Mode().IsRegular() {
			continue // not a set
		}
		ws, _ := os.ReadFile(filepath.Join(dir, workspaceFile))
		sets = append(sets, Set{Dir: dir, Workspace: strings.TrimSpace(string(ws)), Size: TreeSize(dir), LastUsed: st.ModTime()})
	}
	slices.SortFunc(sets, func(a, b Set) int { return a.LastUsed.Compare(b.LastUsed) })
	return sets, nil
}

// TreeSize adds up the files under dir, following no links.
func TreeSize(dir string) int64 {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return 0
	}
	defer r.Close()
	var n int64
	fs.WalkDir(r.FS(), ".", func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// RemoveSet deletes a set, including the read-only directories Go's
// module cache makes, or fails with ErrInUse while a run holds it. It
// works inside the set only: a link planted there by a sandboxed command
// leads nowhere outside.
func RemoveSet(dir string) error {
	return removeSet(dir, false)
}

// clearTree empties dir, including the read-only directories Go's module
// cache makes and the overlay's inaccessible work directories, as far as it
// can. It follows no links: it works through an os.Root.
func clearTree(dir string) error {
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			r.Chmod(p, 0o700)
		}
		return nil
	})
	entries, err := fs.ReadDir(r.FS(), ".")
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, r.RemoveAll(e.Name()))
	}
	return errors.Join(errs...)
}

// Evict keeps the sets under root within max bytes, least recently
// used first, at most once a minute (any process). A set in use is left
// alone: used in the last minute, or locked by a run (a run longer than a
// minute holds its set's lock, or its scratch layer's, until it ends). The
// current set, when it alone is over the cap, has its caches emptied after
// its run, unless another run of its workspace holds it.
func Evict(root string, max int64, current string) {
	if max <= 0 {
		return
	}
	stamp := filepath.Join(root, evictedFile)
	if st, err := os.Lstat(stamp); err == nil && time.Since(st.ModTime()) < evictEvery {
		return
	}
	now := time.Now()
	if err := os.Chtimes(stamp, now, now); err != nil {
		if f, err := os.OpenFile(stamp, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600); err == nil {
			f.Close()
		}
	}
	removeAbandoned(root)
	sets, err := ListSets(root)
	if err != nil {
		return
	}
	var total int64
	for _, s := range sets {
		total += s.Size
	}
	for _, s := range sets {
		if total <= max {
			return
		}
		if s.Dir == current || now.Sub(s.LastUsed) < evictEvery {
			continue
		}
		if removeSet(s.Dir, true) == nil {
			total -= s.Size
		}
	}
	for _, s := range sets {
		if s.Dir == current && total > max && s.Size > max {
			clearIdle(current)
		}
	}
}

// ErrInUse: a run holds the set.
var ErrInUse = errors.New("cache set in use by a running command")

// claim takes every lock of the set in dir, its own and its concurrent
// runs' scratch layers', or fails with ErrInUse when a run holds one; with
// idle, a use in the last minute counts too (checked once the locks are
// held: a run records its use before it takes a lock). release lets go.
func claim(dir string, idle bool) (release func(), err error) {
	var held []*os.File
	release = func() {
		for _, f := range held {
			unlock(f)
		}
	}
	take := func(path string) error {
		f, ok, err := tryLock(path)
		switch {
		case errors.Is(err, errNoLocks):
			return nil
		case err != nil:
			return err
		case !ok:
			return ErrInUse
		}
		held = append(held, f)
		return nil
	}
	if err := take(filepath.Join(dir, lockFile)); err != nil {
		return release, err
	}
	runs, _ := os.ReadDir(filepath.Join(dir, runsDir))
	for _, r := range runs {
		if err := take(filepath.Join(dir, runsDir, r.Name(), runLock)); err != nil {
			return release, err
		}
	}
	if st, err := os.Lstat(filepath.Join(dir, lastUsedFile)); idle && err == nil && time.Since(st.ModTime()) < evictEvery {
		return release, ErrInUse
	}
	return release, nil
}

// removeSet removes the set in dir unless a run holds it (with idle, or
// used it in the last minute). The set is moved aside under its locks
// first, so a run starting while it is removed makes a new set instead of
// using a half-removed one.
func removeSet(dir string, idle bool) error {
	release, err := claim(dir, idle)
	if err != nil {
		release()
		return err
	}
	aside, err := os.MkdirTemp(filepath.Dir(dir), removingPrefix)
	if err == nil {
		err = os.Rename(dir, filepath.Join(aside, "set"))
	}
	release()
	if err != nil {
		os.Remove(aside)
		return err
	}
	return RemoveTree(aside)
}

// clearIdle empties the caches of the set in dir (its records stay)
// unless a run holds it.
func clearIdle(dir string) {
	release, err := claim(dir, false)
	defer release()
	if err == nil {
		clearTree(filepath.Join(dir, DataDir))
	}
}

// removeAbandoned finishes removing the sets an eviction moved aside and
// did not remove (Warden killed).
func removeAbandoned(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), removingPrefix) {
			RemoveTree(filepath.Join(root, e.Name()))
		}
	}
}
