package changes

import (
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A tracked recording lists nothing before the run. The sandbox reports
// each path just before the command changes it (Run.Touch), and the file
// is kept then, as it still is before the run: nothing changes a file in a
// recorded root without such a report first. The look after the run reads
// the reported paths only, so a recording costs what the command changed,
// whatever the size of the tree.
type tracked struct {
	mu sync.Mutex
	// seen are the paths whose state before the run is known: in
	// snapshot.files when they held a file, link or empty directory; in
	// dirs when a directory with entries; in absent when nothing.
	seen   map[string]bool
	dirs   map[string]bool
	absent map[string]bool
	// linked are the inodes of kept files with more than one name, whose
	// other names in the root are yet to be kept; byInode lists the
	// root's files by inode, once a run needs it (nil before).
	linked  []uint64
	byInode map[uint64][]string
	keptIno map[uint64]bool
	// done: the look after has begun; a report that comes later (a call
	// of a process killed as the run ended) changes nothing.
	done bool
	// copied counts the files copied into the store; index is git's
	// whole index once read (keepContent).
	copied int
	index  map[string]indexEntry
}

// BeginTracked starts a recording of roots fed by Touch, for a run whose
// sandbox reports each change before it happens (sandbox.RecordsWrites).
// label names the run to other runs at the same time, as for BeginRun.
func (r *Recorder) BeginTracked(roots []string, label string) *Run {
	run := &Run{rec: r}
	for _, root := range roots {
		given, abs, ok := run.addRoot(root, label)
		if !ok {
			continue
		}
		t := &tracked{seen: map[string]bool{}, dirs: map[string]bool{}, absent: map[string]bool{}}
		s := &snapshot{root: abs, given: given, taken: time.Now(), files: tree{},
			sources: map[string]Source{}, blobbed: map[string]bool{}, tracked: t}
		s.repo, s.inRepo = findRepo(abs)
		run.roots = append(run.roots, s)
	}
	return run
}

// TrackedRoots are the roots a tracked recording records, links resolved:
// what the sandbox reports changes in.
func (run *Run) TrackedRoots() []string {
	var out []string
	for _, s := range run.roots {
		if s.err == nil && s.tracked != nil {
			out = append(out, s.root)
		}
	}
	return out
}

// Touch keeps what the absolute path p holds before the command changes
// it; tree says the entry may move with everything below it. A path
// outside the roots, or in version control metadata, is not recorded.
func (run *Run) Touch(p string, tree bool) {
	if s, rel, ok := run.trackedAt(p); ok {
		run.rec.touch(s, rel, tree)
	}
}

// trackedAt is the tracked root p is in and p relative to it, when p is
// a path the record keeps (below the root, outside version control
// metadata).
func (run *Run) trackedAt(p string) (*snapshot, string, bool) {
	for _, s := range run.roots {
		if s.err != nil || s.tracked == nil {
			continue
		}
		if rel, ok := relWithin(s.root, p); ok {
			return s, rel, rel != "." && inScope(rel)
		}
	}
	return nil, "", false
}

// TouchNew records that nothing was at the absolute path p, which the
// command may now make, when the sandbox looked (it does not wait for
// this call, so p may exist by now).
func (run *Run) TouchNew(p string) {
	s, rel, ok := run.trackedAt(p)
	if !ok {
		return
	}
	t := s.tracked
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done && !t.seen[rel] {
		t.ancestors(s, rel)
		t.seen[rel], t.absent[rel] = true, true
	}
}

// relWithin is p relative to root, in slash form, if p is in root.
func relWithin(root, p string) (string, bool) {
	p = filepath.Clean(p)
	if p == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return filepath.ToSlash(p[len(prefix):]), true
}

// touch keeps rel's state (and, for a tree, that of everything below it)
// unless already kept, copying what only the tree holds into the store.
func (r *Recorder) touch(s *snapshot, rel string, isTree bool) {
	t := s.tracked
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	var fresh []string
	t.ancestors(s, rel)
	if t.keep(s, rel) {
		fresh = append(fresh, rel)
	}
	fresh = append(fresh, t.keepLinks(s)...)
	if isTree && t.dirs[rel] {
		below, unreadable := walkFrom(s.root, rel, nil)
		s.unreadable = append(s.unreadable, unreadable...)
		for sub, e := range below {
			if t.seen[sub] || !inScope(sub) {
				continue
			}
			t.seen[sub] = true
			if t.madeInRun(sub) {
				t.absent[sub] = true
				continue
			}
			s.files[sub] = e
			fresh = append(fresh, sub)
			for d := path.Dir(sub); d != rel && !t.dirs[d]; d = path.Dir(d) {
				t.dirs[d], t.seen[d] = true, true
			}
		}
	}
	if len(fresh) > 0 {
		r.keepContent(s, fresh)
	}
}

// copiesBeforeIndex is how many files a one-shot run copies before it
// reads git's whole index to find the committed ones, which need no copy:
// a run that changes a few files never pays for the index, one that
// rewrites a whole repository (a formatter) copies only what git does not
// hold.
const copiesBeforeIndex = 64

// keepContent makes sure each of rels (entries of s.files) can be had
// back: a file git holds as it is comes back from git, any other is copied
// into the store; a link's target and an empty directory's mode are their
// whole content. A one-shot run looks in the index only for files past the
// copy limit until it has copied copiesBeforeIndex files: a tracked run
// costs what it changes.
func (r *Recorder) keepContent(s *snapshot, rels []string) {
	t := s.tracked
	var files []string
	for _, rel := range rels {
		e := s.files[rel]
		src := Source{Mode: e.Mode, Size: e.Size}
		switch {
		case e.symlink():
			src.Link, src.Lost = s.readLink(rel)
		case e.dir():
		case !e.regular():
			src.Lost = "not a regular file"
		default:
			files = append(files, rel)
		}
		s.setSource(rel, src)
	}
	var index map[string]indexEntry
	if s.inRepo && len(files) > 0 {
		switch {
		case r.Keep || t.copied+len(files) > copiesBeforeIndex:
			if t.index == nil {
				t.index = r.indexEntries(s, nil)
			}
			index = t.index
		default:
			large := map[string]bool{}
			for _, rel := range files {
				if s.files[rel].Size > r.maxFile() {
					large[rel] = true
				}
			}
			if len(large) > 0 {
				index = r.indexEntries(s, large)
			}
		}
	}
	var copies []string
	for _, rel := range files {
		e := s.files[rel]
		switch ie, ok := index[rel]; {
		case ok && ie.matches(e):
			s.setSource(rel, Source{Mode: e.Mode, Size: e.Size, GitObject: ie.name(), GitDir: s.repo.gitDir})
		case e.Size > r.maxFile():
			s.setSource(rel, Source{Mode: e.Mode, Size: e.Size, Lost: "larger than the " + byteSize(r.maxFile()) + " copy limit"})
		default:
			copies = append(copies, rel)
		}
	}
	t.copied += len(copies)
	r.copyInto(s, copies)
}

// markCommitted says which of the files the run changed git holds as they
// were (the description counts those that are not), from the index
// entries of those files alone.
func (r *Recorder) markCommitted(s *snapshot, ch *Change) {
	if !s.inRepo {
		return
	}
	want := map[string]bool{}
	for _, f := range ch.Files {
		if f.Existed && f.Before.GitObject == "" && f.Before.Mode.IsRegular() {
			want[f.Rel] = true
		}
	}
	if len(want) == 0 {
		return
	}
	index := s.tracked.index
	if index == nil {
		index = r.indexEntries(s, want)
	}
	for i := range ch.Files {
		f := &ch.Files[i]
		if ie, ok := index[f.Rel]; ok && want[f.Rel] && ie.matches(s.files[f.Rel]) {
			f.Before.GitObject, f.Before.GitDir = ie.name(), s.repo.gitDir
		}
	}
}

// keep records what rel holds now, its state before the run, on first
// sight; true when that is an entry whose content needs keeping.
func (t *tracked) keep(s *snapshot, rel string) bool {
	if t.seen[rel] {
		return false
	}
	t.seen[rel] = true
	if t.dirs[rel] {
		return false // a directory with entries: they are kept one by one
	}
	if t.madeInRun(rel) {
		t.absent[rel] = true
		return false
	}
	e, isDir, nlink := entryLinks(s.root, rel)
	switch {
	case e != nil:
		s.files[rel] = *e
		if e.regular() && nlink > 1 {
			t.linked = append(t.linked, e.Ino)
		}
		return true
	case isDir:
		t.dirs[rel] = true
	default:
		t.absent[rel] = true
	}
	return false
}

// keepLinks keeps the other names in the root of the files kept with
// more than one: a write through one name changes them all. Finding them
// lists the root once in the run (only a run that writes such a file pays
// for it).
func (t *tracked) keepLinks(s *snapshot) []string {
	var fresh []string
	for len(t.linked) > 0 {
		ino := t.linked[0]
		t.linked = t.linked[1:]
		if t.keptIno[ino] {
			continue
		}
		if t.keptIno == nil {
			t.keptIno = map[uint64]bool{}
		}
		t.keptIno[ino] = true
		if t.byInode == nil {
			t.byInode = map[uint64][]string{}
			all, unreadable := walk(s.root)
			s.unreadable = append(s.unreadable, unreadable...)
			for rel, e := range all {
				if e.regular() && inScope(rel) {
					t.byInode[e.Ino] = append(t.byInode[e.Ino], rel)
				}
			}
		}
		for _, rel := range t.byInode[ino] {
			t.ancestors(s, rel)
			if t.keep(s, rel) {
				fresh = append(fresh, rel)
			}
		}
	}
	return fresh
}

// TouchLinked keeps, before a file outside the roots that has other
// names (hard links) is written, its names in the roots, which the write
// changes too.
func (run *Run) TouchLinked(p string) {
	ino, ok := inodeOf(p)
	if !ok {
		return
	}
	for _, s := range run.roots {
		if s.err != nil || s.tracked == nil {
			continue
		}
		t := s.tracked
		t.mu.Lock()
		if t.done {
			t.mu.Unlock()
			continue
		}
		t.linked = append(t.linked, ino)
		if fresh := t.keepLinks(s); len(fresh) > 0 {
			run.rec.keepContent(s, fresh)
		}
		t.mu.Unlock()
	}
}

// madeInRun reports a path below a directory that did not exist before
// the run: it did not either, whatever is there now.
func (t *tracked) madeInRun(rel string) bool {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		switch {
		case t.absent[d]:
			return true
		case t.dirs[d]:
			return false
		}
	}
	return false
}

// ancestors notes the directories above rel that exist and were not
// made by the run (making one is reported): undo leaves them in place. An
// empty one is kept as an entry, as a listing would.
func (t *tracked) ancestors(s *snapshot, rel string) {
	for d := path.Dir(rel); d != "." && !t.seen[d] && !t.dirs[d]; d = path.Dir(d) {
		switch e, isDir := entryNow(s.root, d); {
		case e != nil && e.dir():
			s.files[d], t.seen[d] = *e, true
			s.setSource(d, Source{Mode: e.Mode})
			return
		case isDir:
			t.dirs[d] = true
		default:
			return // nothing there, or no directory
		}
	}
}

// lookAgain is what is at each reported path now, and at every path below
// a directory the run made (moved in, or made and filled).
func (t *tracked) lookAgain(s *snapshot) map[string]*Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	now := make(map[string]*Entry, len(t.seen))
	for rel := range t.seen {
		if _, ok := now[rel]; ok {
			continue
		}
		e, isDir := entryNow(s.root, rel)
		now[rel] = e
		if e == nil && isDir && t.absent[rel] {
			below, unreadable := walkFrom(s.root, rel, nil)
			s.unreadable = append(s.unreadable, unreadable...)
			for sub, e := range below {
				if inScope(sub) {
					now[sub] = &e
				}
			}
		}
	}
	return now
}

// existed reports a directory the tracked run found in place.
func (t *tracked) existed(rel string) bool { return t != nil && t.dirs[rel] }

// indexEntries are git's index entries of the files in want (and maybe
// more): a process that runs many commands (Keep) keeps the whole index
// and reads it again only when it changes; a one-shot process reads
// through it for those files alone.
func (r *Recorder) indexEntries(s *snapshot, want map[string]bool) map[string]indexEntry {
	if !r.Keep {
		return s.repo.indexOf(want)
	}
	r.indexMu.Lock()
	defer r.indexMu.Unlock()
	if r.indexes == nil {
		r.indexes = map[string]*cachedIndex{}
	}
	c := r.indexes[s.root]
	if c == nil {
		c = &cachedIndex{}
		r.indexes[s.root] = c
	}
	return c.get(s.repo)
}
