package protect

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A repository's .git runs code on the host: its hooks when the user commits,
// core.fsmonitor and friends when any git command reads its config. A mount
// cannot stop a sandboxed command from creating a new .git deep inside a
// writable root (the host side refuses to take git out of the sandbox for
// such a repository, see approvals), but the repositories that exist when the
// command starts are made read-only: scanRepos finds them.

// Bounds of one root's scan, far above an ordinary repository (a monorepo
// of 100,000 files has about 10,000 directories): no time budget, which a
// loaded machine would make any tree exceed. A tree beyond them is scanned
// shallowest first and the rest is not held; that is never silent: every
// run's result says so (NotEnforced), as does doctor.
const (
	ScanMaxDirs  = 1000000
	ScanMaxFound = 4096 // each is a mount in the sandbox
	// scratchDepth bounds the scan of /tmp and $TMPDIR, which hold
	// everyone's scratch: a repository cloned there is found, a test's
	// tree ten levels down is not worth every command's time.
	scratchDepth = 3
	// scanFresh is how long a root's scan is used as it is. An older one is
	// still used (its entries that vanished are skipped) while a fresh scan
	// runs in the background: a long-lived server walks a tree once, not for
	// every command, and no command waits for a rescan.
	scanFresh = 10 * time.Second
	// scanAheadFresh is how long a scan PrepareRun made serves the run:
	// one that starts at once takes it, one that waited for a prompt
	// scans again.
	scanAheadFresh = time.Second
)

var scanCache = struct {
	sync.Mutex
	m map[string]*scanResult
}{m: map[string]*scanResult{}}

type scanResult struct {
	ready      chan struct{} // closed once at, found and cut are set
	ahead      bool          // made by PrepareRun
	at         time.Time
	found      []string
	cut        bool // the scan stopped at its bound
	refreshing bool // under scanCache's lock
}

// StartRepoScan starts finding, for each root, the existing .git directories
// and files below its top (the top one is in Protected already), the gitdir:
// targets of the files, and $GIT_DIR / $GIT_COMMON_DIR from the command's
// environment when they lie in a writable root. The scan runs while the
// launcher does the rest of its set-up; the returned function waits for it,
// fills each root's Found and returns, for each root the index served
// (those in indexed may be: see treeindex_linux.go), its sequence number.
func StartRepoScan(roots []Root, env []string, indexed map[string]bool) (fill func([]Root) Scanned) {
	var fromEnv []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "GIT_DIR" || k == "GIT_COMMON_DIR") && filepath.IsAbs(v) {
			if rp, err := filepath.EvalSymlinks(v); err == nil {
				fromEnv = append(fromEnv, rp)
			}
		}
	}
	results, seqs, wait := ScanRoots(roots, false, indexed)
	return func(roots []Root) Scanned {
		wait()
		before := map[string]map[string]bool{}
		for i := range roots {
			set := map[string]bool{}
			for _, p := range slices.Concat(results[i], roots[i].Protected) {
				set[p] = true
			}
			before[roots[i].Path] = set
			found := slices.DeleteFunc(slices.Clone(results[i]), isLink)
			for _, g := range fromEnv {
				if pathutil.Within(roots[i].Path, g) {
					found = append(found, g)
				}
			}
			// The top's own protected entries are the root's already.
			found = slices.DeleteFunc(found, func(p string) bool { return slices.Contains(roots[i].Protected, p) })
			slices.Sort(found)
			roots[i].Found = slices.Compact(found)
		}
		return Scanned{Indexed: seqs, Before: before}
	}
}

// Scanned is what a run's scan leaves for the check after the run: for
// each root the index served, the index's sequence number; and what each
// root held at the start (its protected entries as found, links too).
type Scanned struct {
	Indexed map[string]uint64
	Before  map[string]map[string]bool
}

// isLink says p is a symbolic link: a protected entry that is one cannot be
// held (a mount would follow it); one a run makes is moved away after it.
func isLink(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}

// ScanRoots walks each root once, without entering the others (nested
// roots are walked on their own), all at once, each from the scan cache
// when a fresh scan is there or on its way. wait waits for all of them.
// ahead says the scans are PrepareRun's, for a run about to start. A root
// in indexed is taken from the index when it serves the root; seqs has its
// sequence number then (for indexCreated), once wait returns.
func ScanRoots(roots []Root, ahead bool, indexed map[string]bool) (results [][]string, seqs map[string]uint64, wait func()) {
	paths := make([]string, len(roots))
	for i, r := range roots {
		paths[i] = r.Path
	}
	store := scanStoreDir(roots)
	useScanStore(store)
	useKnownRepos(store)
	results = make([][]string, len(roots))
	seqs = map[string]uint64{}
	var seqMu sync.Mutex
	var wg sync.WaitGroup
	for i := range paths {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var skip []string
			for _, o := range paths {
				if o != paths[i] && pathutil.Within(paths[i], o) {
					skip = append(skip, o)
				}
			}
			if indexed[paths[i]] {
				if found, seq, ok := indexFound(paths[i], skip); ok {
					results[i] = found
					seqMu.Lock()
					seqs[paths[i]] = seq
					seqMu.Unlock()
					return
				}
			}
			depth := -1
			if IsScratch(paths[i]) {
				depth = scratchDepth
			}
			found, cut := cachedScan(paths[i], skip, depth, ahead)
			results[i] = withKnownRepos(paths[i], skip, found, cut)
		}(i)
	}
	go func() {
		wg.Wait()
		saveScanStore()
		saveKnownRepos()
	}()
	// The remembered repositories are saved before the run starts: a
	// one-shot process may end before the goroutine above gets to it.
	return results, seqs, func() { wg.Wait(); saveKnownRepos() }
}

// ScanRepos fills each root's Found (see StartRepoScan).
func ScanRepos(roots []Root, env []string) {
	StartRepoScan(roots, env, nil)(roots)
}

// scanStoreDir is where the scans' store is kept (see repos_store.go):
// Warden's state directory, when no root lets this run's command write
// there; else "" (no store).
func scanStoreDir(roots []Root) string {
	dir := stateDir()
	if dir == "" {
		return ""
	}
	for _, r := range roots {
		if pathutil.Within(r.Path, dir) && !pathutil.WithinAny(dir, r.Protected) {
			return ""
		}
	}
	return dir
}

// IsScratch says whether dir is /tmp or $TMPDIR.
func IsScratch(dir string) bool {
	for _, t := range []string{"/tmp", os.Getenv("TMPDIR")} {
		if filepath.IsAbs(t) {
			if rt, err := filepath.EvalSymlinks(t); err == nil && rt == dir {
				return true
			}
		}
	}
	return false
}

// cachedScan returns root's scan from the cache, waiting for one on its way
// (started by PrepareRun), else scans it. A scan made ahead of a run that
// then started late (after an approval prompt) is made again: the run must
// not see the tree as it was before it.
func cachedScan(root string, skip []string, depth int, ahead bool) (found []string, cut bool) {
	key := fmt.Sprintf("%s\x00%d\x00%s", root, depth, strings.Join(skip, "\x00"))
	scanCache.Lock()
	r := scanCache.m[key]
	if r != nil && !ahead && r.ahead {
		select {
		case <-r.ready:
			if time.Since(r.at) >= scanAheadFresh {
				r = nil
			}
		default:
		}
	}
	if r == nil {
		r = &scanResult{ready: make(chan struct{}), ahead: ahead}
		scanCache.m[key] = r
		scanCache.Unlock()
		r.run(root, skip, depth)
		return r.found, r.cut
	}
	scanCache.Unlock()
	<-r.ready
	if !ahead && r.ahead && time.Since(r.at) >= scanAheadFresh {
		// Made ahead, begun before a prompt this run waited for.
		return storeScan(root, skip, depth)
	}
	scanCache.Lock()
	if time.Since(r.at) >= scanFresh && !r.refreshing {
		r.refreshing = true
		go func() {
			n := &scanResult{ready: make(chan struct{})}
			n.run(root, skip, depth)
			scanCache.Lock()
			scanCache.m[key] = n
			scanCache.Unlock()
		}()
	}
	scanCache.Unlock()
	return r.found, r.cut
}

// run makes r's scan and marks it ready. Its age counts from its start: a
// scan that took long (a slow filesystem) shows the tree as it was when it
// began.
func (r *scanResult) run(root string, skip []string, depth int) {
	r.at = time.Now()
	r.found, r.cut = storeScan(root, skip, depth)
	close(r.ready)
}

// storeScan walks root with the scan store; cut says the walk stopped at
// its bound.
func storeScan(root string, skip []string, depth int) (found []string, cut bool) {
	return StoreWalk(root, skip, depth, walkHold)
}

// StoreWalk is storeScan listing as mode says (walkTree).
func StoreWalk(root string, skip []string, depth int, mode WalkMode) (found []string, cut bool) {
	gen := scanGen.Add(1)
	found, cut = walkTree(root, root, skip, depth, func(dir string) ([]DirEntry, error) { return storeList(dir, gen) }, mode)
	pruneStore(root, skip, gen)
	return found, cut
}

// WalkRepos walks root breadth first, without following symbolic links,
// without entering a protected entry or a directory in skip, and no deeper
// than depth levels (-1: no limit). It lists the protected entries below
// root's top (scanHolds) plus the targets of the .git files. A directory of
// the user's it cannot read is listed itself (see unlistable); others it
// cannot read are skipped.
func WalkRepos(root string, skip []string, depth int) []string {
	found, _ := walkWith(root, skip, depth, ReadDirNames)
	return found
}

// ScanHolds returns what a scan of root holds read-only below its top: in
// a shared temporary directory, where nobody opens a project below the top
// but a tool run anywhere finds the metadata above it, the VCS metadata
// (VCSEntries); elsewhere every protected entry, as the patch
// guard protects it (protect.Matcher), and the files named with one of
// Suffixes.
func ScanHolds(root string) func(parent string, e DirEntry) bool {
	if IsScratch(root) {
		vcs := VCSEntries()
		return func(_ string, e DirEntry) bool {
			return slices.ContainsFunc(vcs, func(n string) bool { return strings.EqualFold(n, e.Name) })
		}
	}
	m := NewMatcher(os.Getenv)
	return func(parent string, e DirEntry) bool {
		return m.Entry(parent, e.Name) != "" || e.Regular && HasSuffix(e.Name)
	}
}

// walkWith is walkRepos listing each directory with list. cut says it
// stopped at its bound with directories left to list.
func walkWith(root string, skip []string, depth int, list func(dir string) ([]DirEntry, error)) (found []string, cut bool) {
	return walkTree(root, root, skip, depth, list, walkHold)
}

// WalkMode says what a walk lists besides the protected entries: walkHold
// (before a run, what it holds) also the gitdir: targets of the .git
// files; WalkMade (after a run, what the command made) not.
type WalkMode int

const (
	walkHold WalkMode = iota
	WalkMade
)

// walkTree is walkWith from start, root or a directory below it (rel to
// root as the protected names are matched). It lists the protected
// entries, symbolic links too (startRepoScan leaves those out of what is
// held), and with walkHold the gitdir: targets of the .git files.
func walkTree(root, start string, skip []string, depth int, list func(dir string) ([]DirEntry, error), mode WalkMode) (found []string, cut bool) {
	holds := ScanHolds(root)
	type item struct {
		dir, rel string // rel: dir relative to root ("" its top)
		level    int
	}
	rel, err := filepath.Rel(root, start)
	if err != nil || rel == "." {
		rel = ""
	}
	level := 0
	if rel != "" {
		level = strings.Count(rel, string(filepath.Separator)) + 1
	}
	queue := []item{{start, rel, level}}
	for n := 0; len(queue) > 0; n++ {
		if n >= ScanMaxDirs || len(found) >= ScanMaxFound {
			return found, true
		}
		it := queue[0]
		queue = queue[1:]
		entries, err := list(it.dir)
		if err != nil {
			if h, ok := unlistable(root, it.dir, err); ok && !slices.Contains(found, h) {
				found = append(found, h)
			}
			continue
		}
		for _, e := range entries {
			p := filepath.Join(it.dir, e.Name)
			held := holds(it.rel, e)
			switch {
			case held && it.dir != root:
				if h, ok := unsearchableHold(root, p); ok {
					if !slices.Contains(found, h) {
						found = append(found, h)
					}
				} else {
					found = append(found, p)
					if mode == walkHold && e.Regular && e.Name == ".git" {
						if t, ok := gitconfig.GitdirTarget(p, nil); ok {
							found = append(found, t)
						}
					}
				}
			case e.Dir && !held && (depth < 0 || it.level+1 < depth) && !slices.Contains(skip, p):
				queue = append(queue, item{p, filepath.Join(it.rel, e.Name), it.level + 1})
			}
		}
	}
	return found, false
}

type DirEntry struct {
	Name         string
	Dir, Regular bool
}
