package guard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// Guard watches one run's missing protected paths and holds its git
// placeholders (see the package doc).
type Guard struct {
	cfg     protect.GuardConfig
	run     string // this run's directory under cfg.dir
	missing []watched
	home    homeWatch // home tops and watched links (home_linux.go)
	gap     string    // why the names are checked only after the run
	// lateGaps is what the check after the run could not do.
	lateGaps []string

	mu      sync.Mutex
	live    bool // registered with the hub: events are handled
	watched map[watchKey]bool
	removed []protect.Removed
	deep    []deepCheck
	masks   []gitMask          // the git dirs' placeholders this run holds (gitmask_linux.go)
	todos   *protect.TodoWatch // the git dirs' step lists (protect/gittodo.go)
	memo    *pathmemo.Memo     // the run's memo while arm looks; nil after
	freed   bool               // masks released
	armed   chan struct{}      // closed when arm's watches hold
}

// watched is one missing protected path and the writable root it is in.
type watched struct{ root, path string }

// deepCheck finds the protected entries a run created below a nested
// root's top, at any depth: from the index when it served the root (what
// changed since the run's start), else by scanning the root again after the
// run (from the scan store: a stat per directory, a listing per changed
// one) against what was there before.
type deepCheck struct {
	root    string
	skip    []string        // other roots inside it, checked on their own
	before  map[string]bool // the root's Found at the start
	seq     uint64          // the index's sequence number at the start
	indexed bool
}

// newVCSEntries are the metadata entries a run may not create below a
// root's top (protect.VCSEntries).
var newVCSEntries = protect.VCSEntries()

// Bounds of what is kept: a command that makes a huge protected tree on
// another filesystem gets it deleted rather than copied whole.
const (
	keepMaxBytes = 64 << 20
)

// Start holds the git placeholders of roots (whose git dirs are already
// split, protect.SplitGitDirs), sets up the guard of their missing
// protected paths (newGuard) and starts arming its watches in the
// background: the command may start once WaitArmed returns. An error means
// the paths cannot be kept: the run must be refused.
func Start(roots []protect.Root, cfg protect.GuardConfig) (*Guard, error) {
	masks, err := holdGitMasks(roots)
	if err != nil {
		return nil, err
	}
	for _, m := range masks {
		cfg.Memo.Forget(m.path) // a placeholder made just now
	}
	g, err := newGuard(roots, cfg)
	if err != nil {
		releaseGitMasks(masks)
		return nil, err
	}
	g.masks = masks
	g.todos = protect.WatchTodos(roots)
	g.arm()
	return g, nil
}

// Gap says why the run's protected names are checked only after it ends
// (no watch could be set), or is empty.
func (g *Guard) Gap() string { return g.gap }

// newGuard records each root's missing protected paths in its Missing (the
// helper mounts nothing there), refuses a protected path that is a symbolic
// link (it cannot be held read-only) and snapshots the nested roots. It
// runs before the command starts; arm then starts watching.
func newGuard(roots []protect.Root, cfg protect.GuardConfig) (*Guard, error) {
	g := &Guard{cfg: cfg, run: protect.QuarantineRun(), watched: map[watchKey]bool{}}
	real := ""
	if cfg.Dir != "" {
		real = cfg.Memo.ResolveExisting(cfg.Dir)
	}
	for _, r := range roots {
		if real != "" && pathutil.Within(r.Path, real) {
			// Made now, before the missing paths are listed: Warden's state
			// directory is one of them (a home workspace), and the guard
			// must not take its own quarantine for the command's doing.
			made := firstMissing(real, cfg.Memo)
			if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
				return nil, fmt.Errorf("the quarantine directory %s: %v", cfg.Dir, err)
			}
			if made != "" {
				cfg.Memo.Forget(made)
			}
			break
		}
	}
	for i := range roots {
		r := &roots[i]
		r.Missing = nil
		for _, p := range r.Protected {
			if !pathutil.Within(r.Path, p) {
				continue // a gitdir target elsewhere: read-only already, or not there
			}
			if link := cfg.Memo.LinkBelow(r.Path, filepath.Dir(p)); link != "" {
				return nil, fmt.Errorf("protected path %s is reached through the symbolic link %s, which a command could replace with a directory of its own; Warden cannot hold a link in place (replace the link with the directory it points to, or open a project directory rather than %s as the workspace)", p, link, r.Path)
			}
			st, err := cfg.Memo.Lstat(p)
			switch {
			case err != nil:
				r.Missing = append(r.Missing, p)
				g.missing = append(g.missing, watched{r.Path, p})
			case st.Mode()&os.ModeSymlink != 0:
				return nil, fmt.Errorf("protected path %s is a symbolic link; Warden cannot keep it read-only (replace it with the directory or file itself)", p)
			}
		}
		for _, gp := range r.Git {
			if gp.Missing || gp.Masked {
				g.missing = append(g.missing, watched{r.Path, gp.Path})
				continue
			}
			if st, err := cfg.Memo.Lstat(gp.Path); err == nil && st.Mode()&os.ModeSymlink != 0 && !gp.Writable {
				hint := "replace the link with what it points to"
				if filepath.Base(gp.Path) == "hooks" {
					// A common way to share hooks; git's own way is kept.
					hint = "point git at that directory instead (git config core.hooksPath DIR), which Warden keeps read-only, or replace the link with the directory"
				}
				return nil, fmt.Errorf("%s is a symbolic link, which Warden cannot keep read-only: %s", gp.Path, hint)
			}
		}
	}
	for _, r := range roots {
		if cfg.Nested[r.Path] {
			g.deep = append(g.deep, newDeepCheck(r, roots, cfg))
		}
	}
	g.home = newHomeWatch(roots)
	return g, nil
}

// arm starts watching the missing protected paths in the background, and
// looks at each again once its watch holds; wait (waitArmed) before the
// command may start. It runs beside the helper's set-up, which mounts
// nothing at a missing path and so does not depend on it.
func (g *Guard) arm() {
	if g == nil || (len(g.missing) == 0 && g.home.empty()) {
		return
	}
	g.armed = make(chan struct{})
	go func() {
		defer close(g.armed)
		if slowArmForTest > 0 {
			time.Sleep(slowArmForTest)
		}
		g.watchMissing()
	}()
}

// slowArmForTest delays arm's watches (tests of what waits for them).
var slowArmForTest time.Duration

// WaitArmed returns once arm's watches hold (at once if it never ran).
func (g *Guard) WaitArmed() {
	if g != nil && g.armed != nil {
		<-g.armed
	}
}

// watchMissing registers the guard with the hub and watches each missing
// path (see arm).
func (g *Guard) watchMissing() {
	if err := startHub(); err != nil {
		// Still checked after the run; say what is lost.
		g.mu.Lock()
		g.gap = fmt.Sprintf("protected names the command creates are moved away only after it ends, not at once: inotify is unavailable (%v)", err)
		g.mu.Unlock()
		return
	}
	hub.mu.Lock()
	hub.guards[g] = true
	hub.mu.Unlock()
	g.mu.Lock()
	g.live = true
	// The first look at each path may come from the run's memo: each watch
	// that takes hold makes the memo look again at and below its directory
	// (advance), so what it answers after a watch is from after the watch.
	g.memo = g.cfg.Memo
	for _, m := range g.missing {
		g.advance(m)
	}
	g.watchHome()
	g.memo = nil // events come later: always the file system
	g.mu.Unlock()
}

// event moves away each missing protected path at or below name as soon as
// it appears ("/" after lost events: all of them).
func (g *Guard) event(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.live {
		return
	}
	for _, m := range g.missing {
		if pathutil.Within(name, m.path) {
			g.advance(m)
		}
	}
	g.homeEvent(name)
}

// unwatch ends g's share of the hub. Called with g.mu.
func (g *Guard) unwatch() {
	if g.live {
		g.live = false
		hubRelease(g, g.watched)
	}
}

// advance moves m away if it exists, else watches the deepest directory of
// its path that exists, looking again after each new watch so that a
// directory made before the watch took hold is not missed. Called with g.mu.
func (g *Guard) advance(m watched) {
	for range 64 {
		dir, exists := deepestDir(m.root, m.path, g.memo)
		keys := []watchKey{{dir: dir}}
		if exists && g.untouched(m.path) {
			// Watched for a replacement, and for a chmod that makes it usable.
			dir = filepath.Dir(m.path)
			keys = []watchKey{{dir: dir}, {dir: dir, attrib: true}}
		} else if exists {
			g.quarantine(m.root, m.path)
			return
		}
		added := false
		for _, k := range keys {
			if g.watched[k] {
				continue
			}
			if err := hubWatch(k); err != nil {
				if g.gap == "" {
					g.gap = fmt.Sprintf("some protected names the command creates are moved away only after it ends: watching %s failed (%v)", dir, err)
				}
				return
			}
			g.watched[k], added = true, true
			g.memo.Forget(k.dir)
		}
		if !added {
			return
		}
	}
}

// deepestDir walks p's path down from root and returns its deepest existing
// directory (never through a symbolic link), or exists when p itself exists.
func deepestDir(root, p string, memo *pathmemo.Memo) (dir string, exists bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return root, false
	}
	dir = root
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur := filepath.Join(dir, part)
		st, err := memo.Lstat(cur)
		if err != nil {
			return dir, false
		}
		if i == len(parts)-1 {
			return dir, true
		}
		if !st.IsDir() {
			return dir, false
		}
		dir = cur
	}
	return dir, false
}

// firstMissing is the outermost missing directory on the way to the
// resolved path p, or "" when p exists.
func firstMissing(p string, memo *pathmemo.Memo) string {
	missing := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if _, err := memo.Lstat(cur); err == nil || filepath.Dir(cur) == cur {
			return missing
		}
		missing = cur
	}
}

// Finish stops watching and, the command being gone, moves away every
// missing protected path that exists now and every protected entry that
// appeared at any depth in the nested roots. It returns what was moved away
// during the whole run, and what the check after it could not do. The
// placeholders are let go through later, once the run's result is out, or
// at once when later declines (see Start's caller).
func (g *Guard) Finish(later func(release func()) bool) (removed []protect.Removed, gaps []string) {
	g.WaitArmed()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unwatch()
	// The placeholders go once the result is out (0.8 ms in a git
	// workspace): nothing runs in the sandbox any more, and a run that
	// starts first shares them. Until then they count as untouched below.
	if later == nil || !later(g.release) {
		g.releaseMasks()
	}
	for _, m := range g.missing {
		if _, err := os.Lstat(m.path); err == nil && !g.untouched(m.path) {
			g.quarantine(m.root, m.path)
		}
	}
	for _, d := range g.deep {
		created, cut := d.created()
		for _, p := range created {
			g.quarantine(d.root, p)
		}
		if cut {
			g.lateGaps = append(g.lateGaps, fmt.Sprintf("the check after the run stopped at its bound (%d directories, %d protected entries): a protected name the command created deeper in %s may remain", protect.ScanMaxDirs, protect.ScanMaxFound, d.root))
		}
	}
	g.homeFinish()
	g.removed = append(g.removed, g.todos.Disarm(g.cfg.Cwd)...)
	return g.removed, g.lateGaps
}

// Stop ends the watch of a run that did not start.
func (g *Guard) Stop() {
	if g != nil {
		g.WaitArmed()
		g.mu.Lock()
		g.unwatch()
		g.releaseMasks()
		g.mu.Unlock()
	}
}

// release lets go of the run's placeholders.
func (g *Guard) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseMasks()
}

// releaseMasks lets go of the run's placeholders. Called with g.mu.
func (g *Guard) releaseMasks() {
	if !g.freed {
		releaseGitMasks(g.masks)
		g.freed = true
	}
}

// untouched says whether the entry at p is not the command's making: an
// old Warden's placeholder, a git dir's placeholder still empty, or the
// very placeholder this run held (the user may have put a hook in it on
// the host). Called with g.mu.
func (g *Guard) untouched(p string) bool {
	if stalePlaceholder(p) || untouchedMask(p) {
		return true
	}
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	for _, m := range g.masks {
		if m.path == p && os.SameFile(m.info, st) {
			return true
		}
	}
	return false
}

// stalePlaceholder reports an empty mode-000 entry, which Warden versions
// before this one put at missing protected names (and may still, running
// beside this one in a shared /tmp): nothing in it is readable by the
// user's tools, so it is left alone, and watched for a chmod that would
// make it usable.
func stalePlaceholder(p string) bool {
	st, err := os.Lstat(p)
	if err != nil || st.Mode().Perm() != 0 {
		return false
	}
	if st.Mode().IsRegular() {
		return st.Size() == 0
	}
	if !st.IsDir() {
		return false
	}
	entries, err := os.ReadDir(p)
	if err == nil {
		return len(entries) == 0
	}
	return errors.Is(err, os.ErrPermission) && emptyLockedDir(p, st)
}

// lockedEmpty are the mode-000 directories found empty, by identity and
// change time: any change since (a chmod, an entry made) moves the ctime.
var lockedEmpty sync.Map

// lockedStamp is a directory as it was when looked into: device, inode and
// ctime (nanoseconds).
type lockedStamp struct {
	dev, ino uint64
	ctime    int64
}

// emptyLockedDir looks into the mode-000 directory p, which this process
// (not root) cannot list: a command can fill a directory, make it mode 000
// and rename it to a protected name in one step, and what it holds is
// obeyed once anyone makes it readable. The directory is the user's, as
// this process is: it is opened up to be listed, and made mode 000 again
// when empty; one with entries is left writable by its owner, the
// command's making, for the quarantine to move it away (moving a directory
// to another needs write permission on it). The mode is changed through a
// descriptor of the very directory looked at, never through a link.
func emptyLockedDir(p string, st os.FileInfo) bool {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if _, seen := lockedEmpty.Load(lockedStamp{uint64(sys.Dev), sys.Ino, sys.Ctim.Nano()}); seen {
			return true // unchanged since it was looked into (no chmod again: its event would bring us back)
		}
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	if cur, err := os.Stat(self); err != nil || !os.SameFile(cur, st) || unix.Chmod(self, 0o500) != nil {
		return false
	}
	entries, err := os.ReadDir(self)
	if err == nil && len(entries) == 0 {
		var after unix.Stat_t
		if unix.Chmod(self, 0) == nil && unix.Stat(self, &after) == nil {
			lockedEmpty.Store(lockedStamp{after.Dev, after.Ino, after.Ctim.Nano()}, true)
		}
		return true
	}
	unix.Chmod(self, 0o700)
	return false
}

func newDeepCheck(r protect.Root, roots []protect.Root, cfg protect.GuardConfig) deepCheck {
	d := deepCheck{root: r.Path, before: cfg.Before[r.Path]}
	d.seq, d.indexed = cfg.Indexed[r.Path]
	for _, o := range roots {
		if o.Path != r.Path && pathutil.Within(r.Path, o.Path) {
			d.skip = append(d.skip, o.Path)
		}
	}
	return d
}

// created lists the protected entries below the root's top that were not
// there at the start; cut says the scan after the run stopped at its bound.
// A directory the run made unreadable is not one (the scans hold it, as
// they hold any directory of the user's they cannot list).
func (d deepCheck) created() (created []string, cut bool) {
	after, ok := []string(nil), false
	if d.indexed {
		after, ok = protect.IndexCreated(d.root, d.skip, d.seq)
	}
	if !ok {
		after, cut = protect.StoreWalk(d.root, d.skip, -1, protect.WalkMade)
	}
	holds := protect.ScanHolds(d.root)
	for _, p := range after {
		if !d.before[p] && filepath.Dir(p) != d.root && heldName(holds, d.root, p) {
			created = append(created, p)
		}
	}
	return created, cut
}

// heldName says whether p, below root, is a protected entry by its name.
func heldName(holds func(string, protect.DirEntry) bool, root, p string) bool {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil {
		return false
	}
	if rel == "." {
		rel = ""
	}
	st, err := os.Lstat(p)
	return err == nil && holds(rel, protect.DirEntry{Name: filepath.Base(p), Dir: st.IsDir(), Regular: st.Mode().IsRegular()})
}

// quarantine moves p (in root) away and records it. Called with g.mu.
func (g *Guard) quarantine(root, p string) {
	r := protect.Removed{Path: p, Shown: protect.ShownPath(g.cfg.Cwd, p)}
	dest := ""
	if g.cfg.Dir != "" {
		dest = filepath.Join(g.cfg.Dir, g.run, strings.TrimPrefix(p, string(filepath.Separator)))
	}
	kept, err := moveAway(root, p, dest)
	if errors.Is(err, errGone) {
		return // gone already (moved by another run sharing the root)
	}
	r.Kept = kept
	if err != nil {
		r.Err = err.Error()
	}
	for i, o := range g.removed {
		if o.Path == p && o.Err == "" && r.Err == "" {
			g.removed[i].Kept = r.Kept // made again: one line, the latest copy
			return
		}
	}
	g.removed = append(g.removed, r)
}

// moveAway moves p out of root to dest (a free name next to it when taken):
// a rename on the same filesystem, else a copy and a removal. No link is
// followed: p's parent is opened beneath root without symbolic links, and p
// itself is moved or copied as it is. With no dest, or when the copy would
// be too large, p is deleted. It returns where p is kept.
func moveAway(root, p, dest string) (string, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", p, root)
	}
	parent, base := rootFD, filepath.Base(rel)
	if d := filepath.Dir(rel); d != "." {
		parent, err = unix.Openat2(rootFD, d, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if errors.Is(err, unix.ENOENT) {
			return "", errGone
		}
		if err != nil {
			return "", fmt.Errorf("open the directory of %s: %w", p, err)
		}
		defer unix.Close(parent)
	}
	if dest == "" {
		return "", removeAt(parent, base)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", errors.Join(fmt.Errorf("make the quarantine directory: %w", err), removeAt(parent, base))
	}
	destFD, err := unix.Open(filepath.Dir(dest), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", errors.Join(fmt.Errorf("open the quarantine directory: %w", err), removeAt(parent, base))
	}
	defer unix.Close(destFD)
	name := filepath.Base(dest)
	for n := 1; ; n++ {
		err = unix.Renameat2(parent, base, destFD, name, unix.RENAME_NOREPLACE)
		if !errors.Is(err, unix.EEXIST) || n > 1000 {
			break
		}
		name = filepath.Base(dest) + "." + strconv.Itoa(n)
	}
	kept := filepath.Join(filepath.Dir(dest), name)
	switch {
	case err == nil:
		return kept, nil
	case errors.Is(err, unix.ENOENT):
		return "", errGone
	case !errors.Is(err, unix.EXDEV):
		return "", errors.Join(fmt.Errorf("move to %s: %w", kept, err), removeAt(parent, base))
	}
	// Another filesystem (a root on /dev/shm, a state directory elsewhere).
	budget := int64(keepMaxBytes)
	if err := copyAt(parent, base, destFD, name, &budget); err != nil {
		removeAt(destFD, name)
		return "", errors.Join(fmt.Errorf("copy to %s: %w (deleted instead)", kept, err), removeAt(parent, base))
	}
	if err := removeAt(parent, base); err != nil {
		return kept, err
	}
	return kept, nil
}

// removeAt deletes name in the directory dirFD, without following links.
func removeAt(dirFD int, name string) error {
	// os.RemoveAll opens the parent through the descriptor's magic link
	// (the very directory) and works below it with *at calls and O_NOFOLLOW.
	err := os.RemoveAll("/proc/self/fd/" + strconv.Itoa(dirFD) + "/" + name)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

var (
	errTooLarge = errors.New("too large to keep")
	errGone     = errors.New("gone already")
)

// copyAt copies name from the directory src to dst without following
// links: directories, regular files and symbolic links; nothing else.
func copyAt(src int, name string, dst int, dname string, budget *int64) error {
	var st unix.Stat_t
	if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := unix.Mkdirat(dst, dname, 0o700); err != nil {
			return err
		}
		sfd, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		sdir := os.NewFile(uintptr(sfd), name)
		defer sdir.Close()
		dfd, err := unix.Openat(dst, dname, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(dfd)
		names, err := sdir.Readdirnames(-1)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := copyAt(sfd, n, dfd, n, budget); err != nil {
				return err
			}
		}
		return nil
	case unix.S_IFREG:
		if *budget -= st.Size; *budget < 0 {
			return errTooLarge
		}
		in, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		inF := os.NewFile(uintptr(in), name)
		defer inF.Close()
		out, err := unix.Openat(dst, dname, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		outF := os.NewFile(uintptr(out), dname)
		_, err = io.Copy(outF, io.LimitReader(inF, st.Size+1))
		if cerr := outF.Close(); err == nil {
			err = cerr
		}
		return err
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(src, name, buf)
		if err != nil {
			return err
		}
		return unix.Symlinkat(string(buf[:n]), dst, dname)
	}
	return nil // a device, fifo or socket: nothing to keep
}
