package changes

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"
)

// DefaultMaxFile is the largest file whose content a snapshot copies into
// the store (files git already holds are never copied, whatever their
// size): a larger one that a command changes is named as not recoverable.
const DefaultMaxFile = 16 << 20

// Recorder snapshots roots before a run and finds what the run changed.
type Recorder struct {
	Store *Store
	// MaxFile bounds the files copied into the store; 0 is DefaultMaxFile.
	MaxFile int64
}

// Run is one recording: the roots as they were before the run.
type Run struct {
	rec   *Recorder
	roots []*snapshot
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
	// Lost says why the content was not kept, when it was not.
	Lost string `json:"lost,omitempty"`
}

// snapshot is one root before the run.
type snapshot struct {
	root       string
	taken      time.Time
	repo       gitRepo
	inRepo     bool
	files      tree
	sources    map[string]Source
	unreadable []string
	err        error
}

// Begin snapshots each root. A root that cannot be snapshotted is not an
// error: its Change says the run's effects there are not recoverable.
func (r *Recorder) Begin(roots []string) *Run {
	run := &Run{rec: r}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		s := &snapshot{root: abs, err: err}
		if err == nil {
			r.snapshot(s)
		}
		run.roots = append(run.roots, s)
	}
	return run
}

func (r *Recorder) maxFile() int64 {
	if r.MaxFile > 0 {
		return r.MaxFile
	}
	return DefaultMaxFile
}

// snapshot lists the root and makes sure each file's content can be had
// back: from git, from the stat cache, or copied now.
func (r *Recorder) snapshot(s *snapshot) {
	s.taken = time.Now()
	s.files, s.unreadable = walk(s.root)
	var index map[string]indexEntry
	if s.repo, s.inRepo = findRepo(s.root); s.inRepo {
		index = s.repo.index()
	}
	cache := r.Store.loadCache(s.root)
	s.sources = make(map[string]Source, len(s.files))
	var copies []string
	for rel, e := range s.files {
		src := Source{Mode: e.Mode, Size: e.Size}
		switch ie, ok := index[rel]; {
		case ok && ie.matches(e):
			src.GitObject, src.GitDir = ie.oid, s.repo.gitDir
		case !e.regular():
			src.Lost = "not a regular file"
		case e.Size > r.maxFile():
			src.Lost = "larger than the " + byteSize(r.maxFile()) + " copy limit"
		default:
			if c, ok := cache[rel]; ok && c.Entry == e && r.Store.Has(c.Sum) {
				src.Blob = c.Sum
			} else {
				copies = append(copies, rel)
			}
		}
		s.sources[rel] = src
	}
	sums := r.copyAll(s.root, copies)
	for i, rel := range copies {
		src := s.sources[rel]
		if sums[i].err != nil {
			src.Lost = "could not be copied: " + sums[i].err.Error()
		} else {
			src.Blob = sums[i].sum
		}
		s.sources[rel] = src
	}
}

type copied struct {
	sum string
	err error
}

// copyAll puts each file's content in the store, several at once.
func (r *Recorder) copyAll(root string, rels []string) []copied {
	out := make([]copied, len(rels))
	parallel(len(rels), func(i int) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rels[i])))
		if err == nil {
			out[i].sum, err = r.Store.Put(data)
			r.Store.copied.Add(int64(len(data)))
		}
		out[i].err = err
	})
	return out
}

func parallel(n int, fn func(i int)) {
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
// each, one Change per root (in Begin's order), and saves the stat caches
// for the next run.
func (run *Run) Finish() []*Change {
	out := make([]*Change, 0, len(run.roots))
	for _, s := range run.roots {
		out = append(out, run.rec.diff(s))
	}
	return out
}

// diff compares the root now with its snapshot.
func (r *Recorder) diff(s *snapshot) *Change {
	ch := &Change{Root: s.root, InRepo: s.inRepo}
	if s.err != nil {
		ch.Err = s.err.Error()
		return ch
	}
	looked := time.Now()
	now, unreadable := walk(s.root)
	ch.Unreadable = append(s.unreadable, unreadable...)
	var touched []string // present before and after with a different stat, or new
	createdGit := map[string]string{}
	for rel, e := range now {
		if before, ok := s.files[rel]; !ok || before != e {
			touched = append(touched, rel)
		}
	}
	sort.Strings(touched)
	after := make([]afterState, len(touched))
	parallel(len(touched), func(i int) {
		after[i] = r.readAfter(s, touched[i], now[touched[i]])
	})
	for i, rel := range touched {
		a := after[i]
		before, existed := s.sources[rel]
		if existed && a.sameAs(before, s.repo.hashLen) {
			continue // touched, not changed
		}
		f := File{Rel: rel, Existed: existed, AfterExists: true, AfterSum: a.sum, AfterMode: a.mode}
		if existed {
			f.Before = before
		} else if a.git != "" {
			createdGit[rel] = a.git
		}
		ch.Files = append(ch.Files, f)
	}
	for rel := range s.files {
		if _, ok := now[rel]; !ok {
			ch.Files = append(ch.Files, File{Rel: rel, Existed: true, Before: s.sources[rel]})
		}
	}
	sort.Slice(ch.Files, func(i, j int) bool { return ch.Files[i].Rel < ch.Files[j].Rel })
	ch.findMoves(createdGit)
	r.saveCache(s, looked, now, touched, after)
	return ch
}

// afterState is a file's content after the run, as far as undo needs it.
type afterState struct {
	sum  string // SHA-256, "" when unreadable
	git  string // its git blob name, when the snapshot had a git source to compare with
	mode fs.FileMode
	blob bool // its content is in the store now
	size int64
}

func (r *Recorder) readAfter(s *snapshot, rel string, e Entry) afterState {
	a := afterState{mode: e.Mode, size: e.Size}
	if !e.regular() {
		return a
	}
	data, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(rel)))
	if err != nil {
		return a
	}
	a.sum = Sum(data)
	if s.inRepo {
		a.git = GitOID(data, s.repo.hashLen)
	}
	if int64(len(data)) <= r.maxFile() {
		_, err := r.Store.Put(data)
		r.Store.copied.Add(int64(len(data)))
		a.blob = err == nil
	}
	return a
}

// sameAs reports the same content and mode as before the run.
func (a afterState) sameAs(before Source, hashLen int) bool {
	if a.mode != before.Mode || a.sum == "" {
		return false
	}
	return (before.Blob != "" && before.Blob == a.sum) || (before.GitObject != "" && before.GitObject == a.git)
}

// racyWindow is how long before a file was read its last write must be
// for its stat to vouch for the content read: file times have a coarse
// clock, and a write in the same tick as the read leaves the same stat.
const racyWindow = 2 * time.Second

// saveCache remembers, for the next snapshot, the files whose content the
// store holds: those unchanged since this one, and those the run wrote,
// unless written too close to when they were read.
func (r *Recorder) saveCache(s *snapshot, looked time.Time, now tree, touched []string, after []afterState) {
	cache := make(map[string]cached)
	settled := func(e Entry, read time.Time) bool {
		return e.Mtime < read.Add(-racyWindow).UnixNano() // any later write sets a later mtime
	}
	for rel, e := range now {
		if src, ok := s.sources[rel]; ok && src.Blob != "" && s.files[rel] == e && settled(e, s.taken) {
			cache[rel] = cached{Entry: e, Sum: src.Blob}
		}
	}
	for i, rel := range touched {
		if after[i].blob && settled(now[rel], looked) {
			cache[rel] = cached{Entry: now[rel], Sum: after[i].sum}
		}
	}
	r.Store.saveCache(s.root, cache) // best effort: a lost cache only costs copies
}

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
