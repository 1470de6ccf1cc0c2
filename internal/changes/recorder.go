package changes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultMaxFile is the largest file whose content a snapshot copies into
// the store (files git already holds are never copied, whatever their
// size): a larger one that a command changes is named as not recoverable.
const DefaultMaxFile = 16 << 20

// Recorder snapshots roots before a run and finds what the run changed.
//
// A one-shot process (warden exec) lists each root before the run, and
// watches its directories meanwhile (Linux: inotify) so that the look
// after the run reads only what the run changed. A long-lived process
// (the server, warden run) sets Keep: each root's listing stays in memory,
// watched, and a run costs what changed since the last, not the tree.
type Recorder struct {
	Store *Store
	// MaxFile bounds the files copied into the store; 0 is DefaultMaxFile.
	MaxFile int64
	// Keep each root's listing, watched, between runs.
	Keep bool

	mu      sync.Mutex
	kept    map[string]*snapshot
	pending map[string]chan struct{} // roots being primed

	// indexes are the roots' git indexes as a process that keeps its
	// listings last read them (tracker.go).
	indexMu sync.Mutex
	indexes map[string]*cachedIndex
}

// Run is one recording: the roots as they were before the run.
type Run struct {
	rec   *Recorder
	roots []*snapshot
	runs  []*runEntry // each root's registration, nil where there is none
}

// Source is where a file's content before the run can be read back from,
// or why it cannot.
type Source struct {
	Mode fs.FileMode `json:"mode"`
	Size int64       `json:"size"`
	// Blob is its SHA-256 in the Store; GitObject its blob in the
	// repository at GitDir (the file matched the index: it was committed
	// or staged as it is).
	Blob      string `json:"blob,omitempty"`
	GitObject string `json:"gitObject,omitempty"`
	GitDir    string `json:"gitDir,omitempty"`
	// Link is a symbolic link's target (Mode has fs.ModeSymlink): its
	// whole content. An empty directory (fs.ModeDir) needs only its Mode.
	Link string `json:"link,omitempty"`
	// Lost says why the content was not kept, when it was not.
	Lost string `json:"lost,omitempty"`
}

// snapshot is one root as last seen, and how to get each file back.
type snapshot struct {
	root     string // links resolved
	given    string // as the caller named it, made absolute: the Change's Root
	taken    time.Time
	repo     gitRepo
	inRepo   bool
	index    *cachedIndex
	gitIndex map[string]indexEntry // the index as the snapshot read it
	files    tree
	// sources say where each file's content can be had back, except for
	// a file that matches gitIndex: its blob (sourceOf).
	sources    map[string]Source
	blobbed    map[string]bool // the files whose Source is a Blob: what the stat cache holds
	fresh      []string        // the files copied: new entries for the stat cache
	unreadable []string
	watch      *watcher // nil: the look after walks the root
	// tracked: the sandbox reports each change before it happens, and
	// files holds only what was reported (tracker.go).
	tracked *tracked
	err     error
}

// Begin snapshots each root. A root that cannot be snapshotted is not an
// error: its Change says the run's effects there are not recoverable.
func (r *Recorder) Begin(roots []string) *Run { return r.BeginRun(roots, "") }

// BeginRun is Begin for a run that label names to people (its command):
// another run at the same time in one of the roots names it as run beside.
func (r *Recorder) BeginRun(roots []string, label string) *Run {
	run := &Run{rec: r}
	for _, root := range roots {
		given, abs, ok := run.addRoot(root, label) // registered before the look: what runs beside it from then on is seen
		if !ok {
			continue
		}
		s := r.take(abs)
		if s == nil || !r.refresh(s) {
			s = &snapshot{root: abs}
			r.snapshot(s)
		}
		s.given = given
		run.roots = append(run.roots, s)
	}
	return run
}

// addRoot resolves a root the run records (given: made absolute; abs:
// links resolved too) and registers the run in it for other runs to see.
// A root that cannot be resolved is added as such, and ok is false.
func (run *Run) addRoot(root, label string) (given, abs string, ok bool) {
	given, err := filepath.Abs(root)
	abs = given
	if err == nil {
		abs, err = filepath.EvalSymlinks(given)
	}
	if err != nil {
		run.roots = append(run.roots, &snapshot{root: root, given: root, err: err})
		run.runs = append(run.runs, nil)
		return "", "", false
	}
	run.runs = append(run.runs, run.rec.Store.register(abs, label))
	return given, abs, true
}

// Prime starts snapshots of the roots in the background, for a Begin to
// come: the listing overlaps what the process does before the run
// (loading rules, asking the user, starting the sandbox), and Begin then
// applies only what changed since. Where roots cannot be watched it does
// nothing: Begin lists them.
func (r *Recorder) Prime(roots []string) {
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			continue
		}
		r.mu.Lock()
		if r.kept[abs] != nil || r.pending[abs] != nil {
			r.mu.Unlock()
			continue
		}
		if r.pending == nil {
			r.pending = map[string]chan struct{}{}
		}
		done := make(chan struct{})
		r.pending[abs] = done
		r.mu.Unlock()
		go func() {
			s := &snapshot{root: abs}
			r.snapshot(s)
			if s.watch != nil {
				r.keep(s)
			}
			r.mu.Lock()
			delete(r.pending, abs)
			r.mu.Unlock()
			close(done)
		}()
	}
}

// take hands out the root's kept snapshot, if any, once a Prime of it has
// finished: one run at a time uses it (a second run at once in the same
// root lists the root itself).
func (r *Recorder) take(root string) *snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if done := r.pending[root]; done != nil {
		r.mu.Unlock()
		<-done
		r.mu.Lock()
	}
	s := r.kept[root]
	delete(r.kept, root)
	return s
}

func (r *Recorder) keep(s *snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept == nil {
		r.kept = map[string]*snapshot{}
	}
	if old := r.kept[s.root]; old != nil && old.watch != nil {
		old.watch.close()
	}
	r.kept[s.root] = s
}

func (r *Recorder) maxFile() int64 {
	if r.MaxFile > 0 {
		return r.MaxFile
	}
	return DefaultMaxFile
}

// snapshot lists the root, watching it where the system can, and makes
// sure each file's content can be had back: from git, from the stat
// cache, or copied now.
func (r *Recorder) snapshot(s *snapshot) {
	s.taken = time.Now()
	var mark func(string)
	if w, err := newWatcher(s.root); err == nil {
		s.watch, mark = w, w.mark
	}
	indexed := make(chan struct{})
	if s.repo, s.inRepo = findRepo(s.root); s.inRepo {
		s.index = &cachedIndex{}
		go func() { s.index.get(s.repo); close(indexed) }() // read while the tree is listed
	} else {
		close(indexed)
	}
	s.files, s.unreadable = walkFrom(s.root, ".", mark)
	<-indexed
	if s.inRepo {
		s.gitIndex = s.index.get(s.repo)
	}
	cache := r.Store.loadCache(s.root)
	s.sources, s.blobbed = map[string]Source{}, map[string]bool{}
	rels := make([]string, 0, len(s.files))
	for rel := range s.files {
		rels = append(rels, rel)
	}
	r.resolve(s, rels, cache, true)
}

// sourceOf is where rel's content at the snapshot can be had back.
func (s *snapshot) sourceOf(rel string) Source {
	if src, ok := s.sources[rel]; ok {
		return src
	}
	e := s.files[rel]
	src := Source{Mode: e.Mode, Size: e.Size}
	if e.dir() {
		return src // an empty directory: its mode is all there is
	}
	if ie, ok := s.gitIndex[rel]; ok && ie.matches(e) {
		src.GitObject, src.GitDir = ie.name(), s.repo.gitDir
	} else {
		src.Lost = "not recorded"
	}
	return src
}

// resolve finds, for each of rels (files of s.files), where its content
// can be had back, copying into the store what only the tree holds. A
// file that matches the snapshot's own index needs no entry (implicit).
func (r *Recorder) resolve(s *snapshot, rels []string, cache map[string]cached, implicit bool) {
	var index map[string]indexEntry
	if s.inRepo {
		index = s.index.get(s.repo)
	}
	var copies []string
	for _, rel := range rels {
		e := s.files[rel]
		src := Source{Mode: e.Mode, Size: e.Size}
		switch ie, ok := index[rel]; {
		case e.symlink():
			src.Link, src.Lost = s.readLink(rel)
		case e.dir():
		case ok && ie.matches(e) && implicit:
			delete(s.sources, rel)
			continue
		case ok && ie.matches(e):
			src.GitObject, src.GitDir = ie.name(), s.repo.gitDir
		case !e.regular():
			src.Lost = "not a regular file"
		case e.Size > r.maxFile():
			src.Lost = "larger than the " + byteSize(r.maxFile()) + " copy limit"
		default:
			if c, ok := cache[rel]; ok && c.Entry == e { // the store keeps what a cache names (Sweep)
				src.Blob = c.Sum
			} else {
				copies = append(copies, rel)
			}
		}
		s.setSource(rel, src)
	}
	r.copyInto(s, copies)
	s.fresh = append(s.fresh, copies...)
}

// copyInto copies the files rels into the store and sets their sources:
// the blob, or why there is none.
func (r *Recorder) copyInto(s *snapshot, rels []string) {
	sums := r.copyAll(s.root, rels)
	for i, rel := range rels {
		src := s.sources[rel]
		if sums[i].err != nil {
			src.Lost = "could not be copied: " + sums[i].err.Error()
		} else {
			src.Blob = sums[i].sum
		}
		s.setSource(rel, src)
	}
}

// readLink is the target of the link rel, or why it could not be read.
func (s *snapshot) readLink(rel string) (target, lost string) {
	p, done := pathBeneath(s.root, rel)
	defer done()
	if p == "" {
		return "", "its target could not be read: a link now stands on its path"
	}
	target, err := os.Readlink(p)
	if err != nil {
		return "", "its target could not be read: " + err.Error()
	}
	return target, ""
}

// setSource records where rel's content can be had back.
func (s *snapshot) setSource(rel string, src Source) {
	s.sources[rel] = src
	if src.Blob != "" {
		s.blobbed[rel] = true
	} else {
		delete(s.blobbed, rel)
	}
}

// forget drops rel, gone from the tree.
func (s *snapshot) forget(rel string) {
	delete(s.files, rel)
	delete(s.sources, rel)
	delete(s.blobbed, rel)
}

// refresh brings a kept snapshot up to date with what its watcher saw
// since (the user's edits between runs); false when it cannot tell.
func (r *Recorder) refresh(s *snapshot) bool {
	if s.watch == nil {
		return false
	}
	c, ok := s.watch.drain()
	if !ok {
		s.watch.close()
		return false
	}
	s.taken = time.Now()
	now := s.look(c)
	var rels []string
	for rel, e := range now {
		if e == nil {
			s.forget(rel)
			continue
		}
		if old, ok := s.files[rel]; ok && old == *e {
			continue
		}
		s.files[rel] = *e
		rels = append(rels, rel)
	}
	// The stat cache is this process's own memory: a changed file is
	// copied again, or found in git.
	r.resolve(s, rels, nil, false)
	return true
}

// look states, for every path the watcher reported (and every file below
// a directory it reported made, moved or removed, and the directory each
// reported path is in, which it may have emptied or filled), what is there
// now: nil for nothing, or a directory with entries.
func (s *snapshot) look(c changed) map[string]*Entry {
	now := map[string]*Entry{}
	var gone []string // directories that went: their files were listed below them
	parents := map[string]bool{}
	for rel := range c.paths {
		if !inScope(rel) {
			continue
		}
		e, isDir := entryNow(s.root, rel)
		now[rel] = e
		if e == nil || isDir {
			gone = append(gone, rel+"/") // a directory: files below it are looked at as such
		}
		if parent := path.Dir(rel); parent != "." {
			parents[parent] = true
		}
	}
	for dir := range parents {
		if _, seen := now[dir]; !seen && inScope(dir) {
			now[dir], _ = entryNow(s.root, dir)
		}
	}
	if len(gone) > 0 {
		for rel := range s.files {
			for _, g := range gone {
				if strings.HasPrefix(rel, g) {
					if _, seen := now[rel]; !seen {
						now[rel], _ = entryNow(s.root, rel)
					}
					break
				}
			}
		}
	}
	for dir := range c.dirs {
		if !inScope(dir) {
			continue
		}
		t, _ := walkFrom(s.root, dir, s.watch.mark)
		for rel, e := range t {
			now[rel] = &e
		}
	}
	return now
}

// entryNow is what a tree holds at rel now: a file's Entry, an empty
// directory's, or nil (nothing there, or a directory with entries, which
// isDir says).
func entryNow(root, rel string) (e *Entry, isDir bool) {
	e, isDir, _ = entryLinks(root, rel)
	return e, isDir
}

// entryLinks is entryNow and how many names the file has.
func entryLinks(root, rel string) (e *Entry, isDir bool, nlink uint64) {
	p, done := pathBeneath(root, rel)
	defer done()
	if p == "" {
		return nil, false, 0 // a link on the way: not an entry of the tree
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return nil, false, 0
	case !fi.IsDir():
		en := entryOf(fi)
		return &en, false, nlinkOf(fi)
	case IsEmptyDir(p):
		en := dirEntry(fi.Mode())
		return &en, true, 1
	}
	return nil, true, 1
}

// IsEmptyDir reports a directory with no entry (one that cannot be read
// is not: what it holds is unknown).
func IsEmptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err == io.EOF
}

type copied struct {
	sum string
	err error
}

// copyAll puts each file's content in the store, several at once.
func (r *Recorder) copyAll(root string, rels []string) []copied {
	out := make([]copied, len(rels))
	parallel(len(rels), func(i int) {
		data, err := readBeneath(root, rels[i])
		if err == nil {
			out[i].sum, err = r.Store.Put(data)
			r.Store.copied.Add(int64(len(data)))
		}
		out[i].err = err
	})
	return out
}

func parallel(n int, fn func(i int)) {
	if n <= 2 {
		// What a report before one change keeps: not worth the goroutines.
		for i := range n {
			fn(i)
		}
		return
	}
	workers := min(n, 2*runtime.GOMAXPROCS(0))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Finish looks at the roots again and returns what the run changed in
// each, one Change per root (in Begin's order). The snapshots are kept
// for the next run (Keep), or their stat caches saved.
func (run *Run) Finish() []*Change {
	out := make([]*Change, 0, len(run.roots))
	for i, s := range run.roots {
		ch := run.rec.finish(s)
		if e := run.runs[i]; e != nil {
			ch.Overlapped = run.rec.Store.overlapping(s.root, e)
		}
		out = append(out, ch)
	}
	return out
}

// Cancel ends a recording whose run never started: nothing is compared,
// and a kept root stays kept for the next run.
func (run *Run) Cancel() {
	for i, s := range run.roots {
		if e := run.runs[i]; e != nil {
			run.rec.Store.unregister(s.root, e)
		}
		switch {
		case s.watch == nil:
		case run.rec.Keep:
			run.rec.keep(s)
		default:
			s.watch.close()
		}
	}
}

// finish compares the root now with its snapshot.
func (r *Recorder) finish(s *snapshot) *Change {
	ch := &Change{Root: s.given, InRepo: s.inRepo}
	if s.err != nil {
		ch.Err = s.err.Error()
		return ch
	}
	looked := time.Now()
	var now map[string]*Entry
	complete := false
	if s.tracked != nil {
		now = s.tracked.lookAgain(s)
	} else {
		now, complete = r.lookAgain(s)
	}
	ch.Unreadable = s.unreadable
	var touched []string // present after with a different stat, or new
	createdGit := map[string]string{}
	var existedDirs map[string]bool // lazily: the directories deleted entries were in
	for rel, e := range now {
		if e == nil {
			continue
		}
		before, ok := s.files[rel]
		if !ok && e.dir() {
			if s.tracked.existed(rel) {
				continue // a directory in place before the run, emptied
			}
			if existedDirs == nil {
				existedDirs = s.dirsOfDeleted(now)
			}
			if existedDirs[rel] {
				continue // emptied, not made: a directory whose entries were deleted
			}
		}
		if !ok || before != *e {
			touched = append(touched, rel)
		}
	}
	sort.Strings(touched)
	after := make([]afterState, len(touched))
	parallel(len(touched), func(i int) {
		after[i] = r.readAfter(s, touched[i], *now[touched[i]])
	})
	for i, rel := range touched {
		a := after[i]
		_, existed := s.files[rel]
		before := s.sourceOf(rel)
		if existed && a.sameAs(before) {
			continue // touched, not changed
		}
		f := File{Rel: rel, Existed: existed, AfterExists: true, AfterSum: a.sum, AfterMode: a.mode, AfterLink: a.link}
		if existed {
			f.Before = before
		} else {
			f.Dirs = s.madeDirs(rel)
			if a.git != "" {
				createdGit[rel] = a.git
			}
		}
		ch.Files = append(ch.Files, f)
	}
	for rel, e := range now {
		before, existed := s.files[rel]
		if e != nil || !existed {
			continue
		}
		if _, isDir := entryNow(s.root, rel); before.dir() && isDir {
			continue // an empty directory that is one no longer: the files made in it are the change
		}
		ch.Files = append(ch.Files, File{Rel: rel, Existed: true, Before: s.sourceOf(rel)})
	}
	sort.Slice(ch.Files, func(i, j int) bool { return ch.Files[i].Rel < ch.Files[j].Rel })
	ch.findMoves(createdGit)
	if s.tracked != nil {
		r.markCommitted(s, ch) // after the moves: they pair by one content name
	}
	if s.tracked == nil {
		r.settle(s, looked, now, complete, touched, after)
	}
	return ch
}

// dirsOfDeleted are the directories that held the entries deleted since
// the snapshot: such a directory, empty now, existed before the run.
func (s *snapshot) dirsOfDeleted(now map[string]*Entry) map[string]bool {
	dirs := map[string]bool{}
	for rel, e := range now {
		if _, existed := s.files[rel]; e != nil || !existed {
			continue
		}
		for d := path.Dir(rel); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

// madeDirs are the directories the run may have made for rel, innermost
// first, for undo to remove again once they are empty: its ancestors up to
// one the snapshot knew as an empty directory (above it, every directory
// held it, and undo leaves them what they held).
func (s *snapshot) madeDirs(rel string) []string {
	var out []string
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if e, ok := s.files[d]; (ok && e.dir()) || s.tracked.existed(d) {
			break
		}
		out = append(out, d)
	}
	return out
}

// lookAgain is what is at each path that may have changed since the
// snapshot (nil: nothing): the paths the watcher reported, or, when it
// cannot tell, every path before and after (complete).
func (r *Recorder) lookAgain(s *snapshot) (now map[string]*Entry, complete bool) {
	if s.watch != nil {
		if c, ok := s.watch.drain(); ok {
			return s.look(c), false
		}
		s.watch.close()
		s.watch = nil
	}
	t, unreadable := walk(s.root)
	s.unreadable = append(s.unreadable, unreadable...)
	now = make(map[string]*Entry, len(t)+len(s.files))
	for rel := range s.files {
		now[rel] = nil
	}
	for rel, e := range t {
		now[rel] = &e
	}
	return now, true
}

// afterState is a file's content after the run, as far as undo needs it.
type afterState struct {
	sum  string // SHA-256, "" when unreadable
	git  string // its git blob name, when the root is in a repository
	link string // a link's target
	mode fs.FileMode
	blob bool // its content is in the store now
}

func (r *Recorder) readAfter(s *snapshot, rel string, e Entry) afterState {
	a := afterState{mode: e.Mode}
	if e.symlink() {
		a.link, _ = s.readLink(rel)
	}
	if !e.regular() {
		return a
	}
	data, err := readBeneath(s.root, rel)
	if err != nil {
		return a
	}
	a.sum = Sum(data)
	if s.inRepo {
		a.git = GitOID(data, s.repo.hashLen)
	}
	// A listed record keeps the content after, for the next run's
	// snapshot (the stat cache); a reported one keeps what it needs at the
	// next change.
	if s.tracked == nil && int64(len(data)) <= r.maxFile() {
		_, err := r.Store.Put(data)
		r.Store.copied.Add(int64(len(data)))
		a.blob = err == nil
	}
	return a
}

// sameAs reports the same content and mode as before the run.
func (a afterState) sameAs(before Source) bool {
	switch {
	case a.mode != before.Mode:
		return false
	case a.mode.IsDir():
		return true
	case a.mode&fs.ModeSymlink != 0:
		return a.link != "" && a.link == before.Link
	case a.sum == "":
		return false
	}
	return (before.Blob != "" && before.Blob == a.sum) || (before.GitObject != "" && before.GitObject == a.git)
}

// racyWindow is how long before a file was read its last write must be
// for its stat to vouch for the content read: file times have a coarse
// clock, and a write in the same tick as the read leaves the same stat.
const racyWindow = 2 * time.Second

// settle makes the snapshot the tree as it is after the run, for the next
// one: kept in memory, watched (Keep), or as the root's stat cache: the
// files whose content the store holds, unless written too close to when
// they were read.
func (r *Recorder) settle(s *snapshot, looked time.Time, now map[string]*Entry, complete bool, touched []string, after []afterState) {
	if complete {
		s.files = make(tree, len(now))
	}
	for rel, e := range now {
		if e == nil {
			s.forget(rel)
		} else {
			s.files[rel] = *e
		}
	}
	for i, rel := range touched {
		e := now[rel]
		src := Source{Mode: e.Mode, Size: e.Size}
		switch {
		case after[i].blob:
			src.Blob = after[i].sum
		case e.dir():
		case e.symlink():
			if src.Link = after[i].link; src.Link == "" {
				src.Lost = "its target could not be read"
			}
		case e.regular():
			src.Lost = "larger than the " + byteSize(r.maxFile()) + " copy limit"
		default:
			src.Lost = "not a regular file"
		}
		s.setSource(rel, src)
	}
	if r.Keep && s.watch != nil {
		r.keep(s)
		return
	}
	if s.watch != nil {
		s.watch.close()
	}
	settled := func(e Entry, read time.Time) bool {
		return e.Mtime < read.Add(-racyWindow).UnixNano() // any later write sets a later mtime
	}
	// What the snapshot copied is new to the cache; an entry the run made
	// stale no longer matches its file's stat, and is passed over.
	add := map[string]cached{}
	for _, rel := range s.fresh {
		if e, ok := s.files[rel]; ok && s.blobbed[rel] && settled(e, s.taken) {
			add[rel] = cached{Entry: e, Sum: s.sources[rel].Blob}
		}
	}
	if len(add) == 0 {
		return
	}
	full := func() map[string]cached {
		cache := make(map[string]cached, len(s.blobbed))
		for rel := range s.blobbed {
			if e, ok := s.files[rel]; ok && settled(e, s.taken) {
				cache[rel] = cached{Entry: e, Sum: s.sources[rel].Blob}
			}
		}
		for i, rel := range touched {
			if e := s.files[rel]; after[i].blob && !settled(e, looked) {
				delete(cache, rel)
			}
		}
		return cache
	}
	r.Store.addToCache(s.root, add, full) // best effort: a lost cache only costs copies
}

// errSwapped is why a file is not kept when a link now stands on its path.
var errSwapped = errors.New("a link now stands on its path (replaced while being kept)")

// byteSize says n bytes in the largest whole unit.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
