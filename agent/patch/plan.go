package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Source reads a file's current content: the editor's buffer when the file is
// open there (version is the buffer's LSP version), else the disk. A missing
// file is an error satisfying errors.Is(err, fs.ErrNotExist). The returned
// slice belongs to the caller and must not be changed by the Source later.
// ReadFile may be called from several goroutines at once.
type Source interface {
	ReadFile(path string) (content []byte, version int32, open bool, err error)
}

// Options say where a patch may write.
type Options struct {
	// Root is the workspace root; relative patch paths are resolved against it.
	Root string
	// WritableRoots are further directories the patch may write without
	// approval (the sandbox's writable roots).
	WritableRoots []string
	// Protected are absolute paths a patch may change only with approval,
	// wherever they are (Warden's own configuration and state).
	Protected []string
	// Held is the sandbox's answer to what it holds read-only
	// (sandbox.Policy.HeldBy: a home directory's dot-entries, the PATH
	// directories in a root): the held path holding a path, or "". A
	// patch to one needs approval. Nil asks nothing more.
	Held func(path string) string
}

// FileEdit is one file change, resolved against the workspace and computed
// against the file's current content: everything needed to show, approve,
// apply and verify it.
type FileEdit struct {
	Change *FileChange
	Path   string // absolute
	Rel    string // as shown to people: relative to the root when inside it
	MoveTo string // absolute destination of a move, or ""
	RelTo  string

	Existed bool
	Before  string
	Version int32 // editor version of Before, when Open
	Open    bool
	Mode    fs.FileMode // mode for the file written (0: default for new files)
	// SetsMode: Mode differs from the file's mode on disk (an undo of a
	// command that changed it), which only a write on disk puts back.
	SetsMode bool
	// OnDisk: only the disk changes; the editor's buffer already shows the
	// content (an undo of a command the editor did not reload).
	OnDisk bool

	After string // the content left at Target() (unused when deleting)
	Edits []Edit // an update's hunks as byte edits of Before

	// A move over an existing file replaces it.
	DestExisted bool
	DestBefore  string
	DestVersion int32
	DestOpen    bool

	// PruneDirs are directories to remove, if empty, after deleting the file
	// (undo removes the directories a patch created).
	PruneDirs []string

	// What Lstat said of Path and MoveTo while preparing (nil: absent).
	// When the content came from the disk too (fromDisk), Disk.Apply compares
	// them to notice a file changed since.
	lstat, destLstat fs.FileInfo
	fromDisk         bool
}

// Target is where the file's content ends up: the move destination or Path.
func (f *FileEdit) Target() string {
	if f.MoveTo != "" {
		return f.MoveTo
	}
	return f.Path
}

// Deleted reports whether the change removes the file.
func (f *FileEdit) Deleted() bool { return f.Change.Kind == Delete }

// Concern is a reason a file change needs the user's approval before it lands.
type Concern struct {
	Path   string // absolute
	Rel    string
	Reason string
}

func (c Concern) String() string { return c.Rel + " " + c.Reason }

// Plan is a patch ready to apply: every file's new content is computed and
// checked, and Concerns lists what needs approval first.
type Plan struct {
	Root     string
	Files    []FileEdit
	Concerns []Concern

	// checkpoint is the undo record the plan goes with (set by Apply and
	// Checkpoints.Undo), which Disk.Apply settles with its journal.
	checkpoint *checkpointLink
}

// Paths lists every file the plan touches (sources and destinations), sorted:
// the keys for per-file approval.
func (p *Plan) Paths() []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path)
		if f.MoveTo != "" {
			out = append(out, f.MoveTo)
		}
	}
	sort.Strings(out)
	return out
}

// Summary describes the plan in a few words ("update a.go, add b.go").
func (p *Plan) Summary() string {
	parts := make([]string, 0, len(p.Files))
	for i, f := range p.Files {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(p.Files)-4))
			break
		}
		switch {
		case f.MoveTo != "":
			parts = append(parts, "move "+f.Rel+" to "+f.RelTo)
		case f.Change.Kind == Update:
			parts = append(parts, "update "+f.Rel)
		default:
			parts = append(parts, f.Change.Kind.String()+" "+f.Rel)
		}
	}
	return strings.Join(parts, ", ")
}

// RefusedError is a change Warden will not make even with approval.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string { return e.Path + ": " + e.Reason }

// Prepare resolves and checks every change and computes its result against
// the current content from src. It fails, naming the file and chunk, if any
// change cannot be applied; it changes nothing.
func Prepare(changes []FileChange, src Source, opt Options) (*Plan, error) {
	if len(changes) == 0 {
		return nil, ErrEmpty
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	g := newGuard(root, opt.WritableRoots)
	g.protected, g.held = opt.Protected, opt.Held
	plan := &Plan{Root: root, Files: make([]FileEdit, 0, len(changes))}
	touched := make(map[string]*FileChange, len(changes))
	claim := func(c *FileChange, abs, rel string) error {
		if prev, ok := touched[abs]; ok {
			return &ParseError{Line: c.Line, Msg: fmt.Sprintf("%s is changed twice in this patch (also at patch line %d); put all its changes in one section", rel, prev.Line)}
		}
		touched[abs] = c
		return nil
	}
	for i := range changes {
		c := &changes[i]
		f := FileEdit{Change: c}
		if f.Path, err = g.resolve(c.Path); err != nil {
			return nil, err
		}
		f.Rel = g.rel(f.Path)
		if err := claim(c, f.Path, f.Rel); err != nil {
			return nil, err
		}
		if c.MoveTo != "" {
			if f.MoveTo, err = g.resolve(c.MoveTo); err != nil {
				return nil, err
			}
			if f.MoveTo == f.Path {
				f.MoveTo = ""
			} else {
				f.RelTo = g.rel(f.MoveTo)
				if err := claim(c, f.MoveTo, f.RelTo); err != nil {
					return nil, err
				}
			}
		}
		plan.Files = append(plan.Files, f)
	}
	// Reading and matching each file is independent, and waits on the disk
	// more than the CPU: do it for several files at once.
	concerns := make([][]Concern, len(plan.Files))
	err = parallel(len(plan.Files), func(i int) error {
		f := &plan.Files[i]
		if err := compute(f, src); err != nil {
			return err
		}
		concerns[i] = g.check(f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range concerns {
		plan.Concerns = append(plan.Concerns, c...)
	}
	return plan, nil
}

// parallel runs fn(0..n-1) on a few goroutines and returns the error of the
// lowest index that failed, so errors do not depend on scheduling.
func parallel(n int, fn func(i int) error) error {
	workers := min(n, 8)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fileState is a file as found while preparing: its content from the Source
// and what the disk says about it.
type fileState struct {
	content string
	version int32
	open    bool
	exists  bool
	mode    fs.FileMode // permissions (through a symlink)
	disk    fs.FileInfo // Lstat of the path, nil if absent
}

// read returns a file's current state, refusing directories and special files.
func read(src Source, path, rel string) (fileState, error) {
	var st fileState
	info, statErr := os.Lstat(path)
	if statErr == nil {
		st.disk = info
		target := info
		if info.Mode()&fs.ModeSymlink != 0 {
			if real, err := os.Stat(path); err == nil {
				target = real
			}
		}
		if target.IsDir() {
			return st, &RefusedError{Path: rel, Reason: "is a directory; patches change files, not directories"}
		}
		if !target.Mode().IsRegular() && target.Mode()&fs.ModeSymlink == 0 {
			return st, &RefusedError{Path: rel, Reason: fmt.Sprintf("is not a regular file (%s)", target.Mode().Type())}
		}
		st.mode = target.Mode().Perm()
	}
	data, version, open, err := src.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", rel, err)
	}
	// The Source hands over a fresh slice it never touches again (Disk reads
	// it, the document store copies it), so it can become the string as is:
	// patches read every file they touch, and this halves the copying.
	st.content, st.version, st.open, st.exists = unsafe.String(unsafe.SliceData(data), len(data)), version, open, true
	return st, nil
}

// compute fills in the file's current state and its result.
func compute(f *FileEdit, src Source) error {
	c := f.Change
	st, err := read(src, f.Path, f.Rel)
	if err != nil {
		return err
	}
	f.Before, f.Version, f.Open, f.Existed, f.Mode = st.content, st.version, st.open, st.exists, st.mode
	f.lstat = st.disk
	_, f.fromDisk = src.(Disk)
	if c.Mode != 0 {
		f.Mode = c.Mode
	}
	switch c.Kind {
	case Add:
		f.After = c.Content
	case Delete:
		if !f.Existed {
			return &RefusedError{Path: f.Rel, Reason: "cannot be deleted: it does not exist"}
		}
		if len(c.Hunks) > 0 {
			rest, _, err := applyHunks(f.Rel, f.Before, c.Hunks)
			if err != nil {
				return err
			}
			if rest != "" {
				return &RefusedError{Path: f.Rel, Reason: "the diff deletes the file but does not remove all of its content; it has changed since the diff was made"}
			}
		}
	case Update:
		if !f.Existed {
			return &RefusedError{Path: f.Rel, Reason: "does not exist; Update File needs an existing file (use Add File to create one)"}
		}
		if len(c.Hunks) > 0 && hasNUL(f.Before) {
			return &RefusedError{Path: f.Rel, Reason: "is a binary file; Warden patches text files only"}
		}
		if f.After, f.Edits, err = applyHunks(f.Rel, f.Before, c.Hunks); err != nil {
			return err
		}
		if f.MoveTo != "" {
			dest, err := read(src, f.MoveTo, f.RelTo)
			if err != nil {
				return err
			}
			f.DestBefore, f.DestVersion, f.DestOpen, f.DestExisted = dest.content, dest.version, dest.open, dest.exists
			f.destLstat = dest.disk
		}
	}
	return nil
}
