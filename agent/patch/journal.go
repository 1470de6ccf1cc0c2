package patch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/config"
)

// A journal makes Disk.Apply all or nothing even when Warden is killed
// half-way (SIGKILL, a crash, a power cut). It lives in Warden's state
// directory, never in the user's tree, as files named by the change's id:
//
//	ID.lock    held (flock, LockFileEx) by the process making the change, so
//	           a running change is never taken for an interrupted one
//	ID.intent  what the change does, written and flushed before any file of
//	           the user's is touched: every target, the temporary file its
//	           new content is staged in, a digest of that content, and the
//	           target's previous content and mode (the pre-image)
//	ID.commit  the commit record, flushed once every temporary file is
//	           staged and flushed, before the first rename
//	ID.nodes   an undo's steps on links and empty directories, pending
//	           (see beginNodes)
//
// The rule, the same when the change itself fails and when a later Warden
// finds it interrupted: with a durable commit record the change is finished
// (every staged temporary file renamed into place, every deletion done);
// without one it is rolled back (temporary files removed, any target that
// holds the change's new content given back its pre-image, created
// directories removed). Both are idempotent, so a recovery that is itself
// killed is simply done again. A file that holds neither its old nor its new
// content was changed by someone else since: it is left alone and named.
//
// Temporary files are named .BASE.warden-ID-N next to their target (a
// rename must stay on one filesystem) and are listed in the intent before
// they are created, so recovery always knows every one of them.
type journal struct {
	dir     string
	hdr     journalHeader
	entries []journalEntry
	lock    *os.File
}

// journalVersion changes when the intent's format does; an intent of
// another version is left for the Warden that wrote it.
const journalVersion = 1

type journalHeader struct {
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Root    string    `json:"root"`
	Summary string    `json:"summary"`
	Created time.Time `json:"created"`
	// Dirs are the directories the change creates, outermost first; Prune
	// those it removes when they end up empty after its deletions.
	Dirs  []string `json:"dirs,omitempty"`
	Prune []string `json:"prune,omitempty"`
	// Checkpoint is the undo record the change goes with, if any.
	Checkpoint *checkpointRef `json:"checkpoint,omitempty"`
	Entries    int            `json:"entries"`
}

// journalEntry is one file the change writes or removes. In the intent each
// entry's JSON line is followed by its pre-image (Before bytes) and a newline.
type journalEntry struct {
	Remove   bool        `json:"remove,omitempty"`
	Path     string      `json:"path"`
	Tmp      string      `json:"tmp"`
	Existed  bool        `json:"existed"`
	Mode     fs.FileMode `json:"mode"`
	AfterSum string      `json:"afterSum,omitempty"`
	Before   int         `json:"before"`
	before   string

	// BeforeMode is the mode the change replaces, when it changes it (an
	// undo of a command's chmod): a rollback puts it back too.
	BeforeMode fs.FileMode `json:"beforeMode,omitempty"`
}

var errLocked = errors.New("locked by a running Warden")

const isWindows = runtime.GOOS == "windows"

// JournalDir is where Disk keeps the journals of the changes it is making
// when Disk.Journal is empty: config.StateDir()/journal.
func JournalDir() string { return filepath.Join(config.StateDir(), "journal") }

func (j *journal) path(ext string) string { return filepath.Join(j.dir, j.hdr.ID+ext) }

// beginJournal locks a fresh journal id in dir.
func beginJournal(dir string, hdr journalHeader) (*journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		hdr.ID = strconv.FormatUint(rand.Uint64(), 36)
		j := &journal{dir: dir, hdr: hdr}
		f, err := os.OpenFile(j.path(".lock"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := lockNamed(f); err != nil {
			f.Close()
			return nil, err
		}
		j.lock = f
		return j, nil
	}
}

// lockNamed locks f, then checks that its name still leads to it: a
// recovery may have removed a lock file between its creation and its lock.
func lockNamed(f *os.File) error {
	if err := tryLock(f); err != nil {
		return err
	}
	held, err := f.Stat()
	if err != nil {
		return err
	}
	if named, err := os.Stat(f.Name()); err != nil || !os.SameFile(held, named) {
		return fmt.Errorf("lock file %s was replaced while being locked", f.Name())
	}
	return nil
}

// tmpName is the n-th temporary file of journal id, next to target.
func tmpName(target, id string, n int) string {
	base := filepath.Base(target)
	for len(base) > 180 { // room for the suffix within a 255-byte name
		base = base[:len(base)-1]
		for !utf8.RuneStart(base[len(base)-1]) || !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
	}
	return filepath.Join(filepath.Dir(target), "."+base+".warden-"+id+"-"+strconv.Itoa(n))
}

// writeIntent writes the intent and flushes it before it takes its name:
// an intent that exists is complete.
func (j *journal) writeIntent() error {
	j.hdr.Version, j.hdr.Entries = journalVersion, len(j.entries)
	return j.publish(".intent", func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		err := enc.Encode(j.hdr)
		for i := 0; i < len(j.entries) && err == nil; i++ {
			e := &j.entries[i]
			e.Before = len(e.before)
			if err = enc.Encode(e); err == nil {
				w.WriteString(e.before)
				err = w.WriteByte('\n')
			}
		}
		return err
	})
}

// publish writes the journal's file with suffix through a temporary one,
// flushed to disk before it takes its name and the name is made durable:
// a journal file that exists is complete. On error neither is left.
func (j *journal) publish(suffix string, write func(*bufio.Writer) error) error {
	part := j.path(".part")
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(part, j.path(suffix))
	}
	if err == nil {
		err = syncDir(j.dir)
	}
	if err != nil {
		os.Remove(part)
		os.Remove(j.path(suffix))
	}
	return err
}

// readJournal reads an intent written by writeIntent.
func readJournal(dir, id string) (*journal, error) {
	j := &journal{dir: dir}
	f, err := os.Open(filepath.Join(dir, id+".intent"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	line, err := r.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &j.hdr)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", id, err)
	}
	if j.hdr.Version != journalVersion || j.hdr.ID != id {
		return nil, fmt.Errorf("journal %s: version %d (this Warden reads %d) or id %q does not match its name", id, j.hdr.Version, journalVersion, j.hdr.ID)
	}
	j.entries = make([]journalEntry, j.hdr.Entries)
	for i := range j.entries {
		e := &j.entries[i]
		line, err := r.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, e)
		}
		if err == nil && e.Before < 0 {
			err = errors.New("negative pre-image length")
		}
		var buf []byte
		if err == nil {
			buf = make([]byte, e.Before+1)
			_, err = io.ReadFull(r, buf)
		}
		if err == nil && buf[e.Before] != '\n' {
			err = errors.New("pre-image not followed by a newline")
		}
		if err != nil {
			return nil, fmt.Errorf("journal %s, entry %d: %w", id, i+1, err)
		}
		e.before = string(buf[:e.Before])
	}
	return j, nil
}

// commit writes the commit record: from here the change is finished, not
// rolled back, whatever happens to this process.
func (j *journal) commit() error {
	f, err := os.OpenFile(j.path(".commit"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		os.Remove(j.path(".commit"))
		return err
	}
	return syncDir(j.dir)
}

// uncommit removes the commit record durably, for a change that failed
// half-way and must be rolled back instead.
func (j *journal) uncommit() error {
	if err := os.Remove(j.path(".commit")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(j.dir)
}

func (j *journal) committed() bool {
	_, err := os.Lstat(j.path(".commit"))
	return err == nil
}

// finish forgets the journal, once its change is whole (done or undone).
// The intent goes first: without it the rest is debris any Warden removes.
func (j *journal) finish() error {
	err := os.Remove(j.path(".intent"))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if nerr := os.Remove(j.path(".nodes")); nerr != nil && !errors.Is(nerr, fs.ErrNotExist) {
		err = errors.Join(err, nerr)
	}
	os.Remove(j.path(".commit"))
	os.Remove(j.path(".part"))
	j.release(true)
	return err
}

// release unlocks the journal, removing its lock file when done with it.
func (j *journal) release(remove bool) {
	if j.lock == nil {
		return
	}
	if remove && !isWindows {
		os.Remove(j.path(".lock")) // under the lock: no one else owns it
	}
	j.lock.Close()
	if remove && isWindows {
		os.Remove(j.path(".lock")) // Windows removes no open file
	}
	j.lock = nil
}

// rollForward finishes a committed change: the staged files that are still
// there are renamed into place, the deletions done.
func (j *journal) rollForward() error {
	var errs []error
	dirs := map[string]bool{}
	for _, e := range j.entries {
		dirs[filepath.Dir(e.Path)] = true
		if e.Remove {
			if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if _, err := os.Lstat(e.Tmp); err != nil {
			continue // renamed already
		}
		if err := rename(e.Tmp, e.Path); err != nil {
			errs = append(errs, err)
		}
	}
	pruneEmpty(j.hdr.Prune)
	errs = append(errs, syncDirs(dirs))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return j.hdr.Checkpoint.settle(true)
}

// rollBack undoes whatever part of the change happened: temporary files are
// removed and every file holding the change's new content, or deleted by
// it, gets its pre-image back. It returns the files it left alone because
// they hold neither their old nor their new content: someone else's edit.
func (j *journal) rollBack() (kept []string, err error) {
	var errs []error
	dirs := map[string]bool{}
	for _, e := range j.entries {
		if err := os.Remove(e.Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		data, rerr := readFile(e.Path)
		exists := rerr == nil
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			errs = append(errs, rerr)
			continue
		}
		mode := diskMode(e.Path)
		isOld := exists == e.Existed && (!exists || string(data) == e.before && (e.BeforeMode == 0 || mode == e.BeforeMode))
		isNew := !e.Remove && exists && sum(data) == e.AfterSum && (e.BeforeMode == 0 || mode == e.Mode.Perm()) || e.Remove && !exists
		switch {
		case isOld:
		case !isNew:
			kept = append(kept, e.Path)
		case e.Existed:
			dirs[filepath.Dir(e.Path)] = true
			errs = append(errs, restore(e))
		default:
			dirs[filepath.Dir(e.Path)] = true
			errs = append(errs, os.Remove(e.Path))
		}
	}
	removeEmpty(j.hdr.Dirs)
	errs = append(errs, syncDirs(dirs))
	if err := errors.Join(errs...); err != nil {
		return kept, err
	}
	return kept, j.hdr.Checkpoint.settle(false)
}

// restore gives e's path its pre-image back, through e's temporary file.
func restore(e journalEntry) error {
	if err := os.Remove(e.Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(e.Path), 0o755); err != nil {
		return err
	}
	mode := e.Mode
	if e.BeforeMode != 0 {
		mode = e.BeforeMode
	}
	if err := stageAs(e.Tmp, e.before, mode, true); err != nil {
		return err
	}
	if err := rename(e.Tmp, e.Path); err != nil {
		os.Remove(e.Tmp)
		return err
	}
	return nil
}

// removeEmpty removes dirs (outermost first) that are empty, innermost first.
func removeEmpty(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, when not empty
	}
}

// pruneEmpty removes those of dirs that are empty, in order (each file's
// directories innermost first).
func pruneEmpty(dirs []string) {
	for _, d := range dirs {
		os.Remove(d) // fails, as it should, when not empty
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// syncDirs makes the renames and removals in dirs durable, before the
// journal that could redo them goes.
func syncDirs(dirs map[string]bool) error {
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		if exists(d) {
			list = append(list, d)
		}
	}
	return parallel(len(list), func(i int) error { return syncDir(list[i]) })
}

// Recovered is a change a killed Warden left half done, and what became of it.
type Recovered struct {
	Root    string
	Summary string
	Undo    bool // the change was an undo
	// Finished: every file has the change's new content; else every file
	// is back as it was before the change.
	Finished bool
	Files    int
	// Kept are files left alone: changed by someone else since.
	Kept []string
	// Nodes counts the links and empty directories of an undo's node
	// steps (see beginNodes), settled as Finished says; NodesGone is set
	// when their record was cleared, leaving them as they are.
	Nodes     int
	NodesGone bool
}

func (r Recovered) String() string {
	what := "patch"
	if r.Undo {
		what = "undo"
	}
	if r.Nodes > 0 || r.NodesGone {
		return r.nodesString()
	}
	var b strings.Builder
	if r.Finished {
		fmt.Fprintf(&b, "finished an interrupted %s in %s (%s): Warden was stopped after it had committed the change; all %d files now have their new content", what, r.Root, r.Summary, r.Files)
	} else {
		fmt.Fprintf(&b, "rolled back an interrupted %s in %s (%s): Warden was stopped before it had committed the change; all %d files are as they were before it", what, r.Root, r.Summary, r.Files)
	}
	b.WriteString(", and its temporary files are removed")
	if len(r.Kept) > 0 {
		fmt.Fprintf(&b, "; left alone because they changed since: %s", strings.Join(r.Kept, ", "))
	}
	return b.String()
}

func (r Recovered) nodesString() string {
	switch {
	case r.NodesGone:
		return fmt.Sprintf("found the links and empty directories of an interrupted undo in %s (%s), but its record was cleared since: they are left as they are", r.Root, r.Summary)
	case r.Finished:
		return fmt.Sprintf("finished an interrupted undo in %s (%s): Warden was stopped after it had committed the undo; its %d links and empty directories are back as they were before the command, and its temporary links are removed", r.Root, r.Summary, r.Nodes)
	}
	return fmt.Sprintf("rolled back an interrupted undo in %s (%s): Warden was stopped before it had committed the undo; its %d links and empty directories are as the command left them, and its temporary links are removed", r.Root, r.Summary, r.Nodes)
}

// Recover finishes or rolls back every change left interrupted in the
// journal directory dir whose root is one of roots, inside one, or holds one
// (every change when roots is empty), and removes its temporary files.
// Changes a running Warden is making are left to it. The links and empty
// directories of an interrupted undo are settled after every file's journal,
// as the undo's record then says. It returns what it did;
// an error names a journal it could not settle, which stays for the next try.
func Recover(dir string, roots ...string) ([]Recovered, error) {
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("interrupted changes: %w", err)
	}
	ids := map[string]bool{}
	var order []string
	for _, n := range names {
		id, _, ok := strings.Cut(n.Name(), ".")
		if ok && !ids[id] {
			ids[id] = true
			order = append(order, id)
		}
	}
	var done []Recovered
	var errs []error
	for _, id := range order {
		r, err := recoverOne(dir, id, roots)
		if err != nil {
			errs = append(errs, err)
		}
		if r != nil {
			done = append(done, *r)
		}
	}
	for _, id := range order {
		r, err := recoverNodes(dir, id, roots)
		if err != nil {
			errs = append(errs, err)
		}
		if r != nil {
			done = append(done, *r)
		}
	}
	return done, errors.Join(errs...)
}

// recoverOne settles journal id if no running Warden holds it.
func recoverOne(dir, id string, roots []string) (*Recovered, error) {
	j := &journal{dir: dir, hdr: journalHeader{ID: id}}
	f, err := os.OpenFile(j.path(".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("interrupted change %s: %w", id, err)
	}
	if err := lockNamed(f); err != nil {
		f.Close()
		return nil, nil // running, or just finished
	}
	j.lock = f
	if exists(j.path(".nodes")) {
		j.release(false)
		return nil, nil // an undo's node steps: settled after every file
	}
	if !exists(j.path(".intent")) {
		return nil, j.finish() // debris of a change that never started or ended
	}
	read, err := readJournal(dir, id)
	if err != nil {
		j.release(false)
		return nil, fmt.Errorf("interrupted change: %w; check the files it names and remove it by hand", err)
	}
	read.lock = j.lock
	j = read
	if len(roots) > 0 && !related(j.hdr.Root, roots) {
		j.release(false)
		return nil, nil
	}
	r := &Recovered{Root: j.hdr.Root, Summary: j.hdr.Summary, Undo: j.hdr.Checkpoint != nil && j.hdr.Checkpoint.Undo, Files: len(j.entries)}
	if r.Finished = j.committed(); r.Finished {
		err = j.rollForward()
	} else {
		r.Kept, err = j.rollBack()
	}
	if err != nil {
		j.release(false)
		return nil, fmt.Errorf("interrupted change %s in %s: %w; Warden tries again at its next start", id, j.hdr.Root, err)
	}
	return r, j.finish()
}

// related reports whether root is one of roots, inside one, or holds one,
// as given or with links resolved.
func related(root string, roots []string) bool {
	for _, r := range roots {
		r, _ = filepath.Abs(r)
		for _, pair := range [][2]string{{root, r}, {resolved(root), resolved(r)}} {
			_, in := within(pair[0], pair[1])
			_, holds := within(pair[1], pair[0])
			if in || holds {
				return true
			}
		}
	}
	return false
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
