package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// Disk is the Workspace of files on disk (the CLI, and tests). It applies a
// plan all or nothing: every new content is written to a temporary file next
// to its target first, then all are renamed into place; if any step fails,
// the files already replaced are restored and nothing is left changed.
type Disk struct{}

// ReadFile reads path from disk (never open in an editor: version 0).
func (Disk) ReadFile(path string) ([]byte, int32, bool, error) {
	data, err := readFile(path)
	return data, 0, false, err
}

// Hooks for tests that make a step fail half-way through a commit.
var (
	renameFile = rename
	removeFile = os.Remove
)

// rename is os.Rename without its Lstat of the target: the targets here are
// files Warden just checked.
func rename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// diskWrite is one file to be written: its content staged in tmp.
type diskWrite struct {
	target  string // where it lands (symlinks resolved)
	content string
	mode    fs.FileMode
	existed bool
	before  string
	oldMode fs.FileMode
	tmp     string
}

// diskRemoval is one file to be removed.
type diskRemoval struct {
	path   string
	before string
	mode   fs.FileMode
}

// Apply writes the plan to disk, all or nothing. It first checks that no file
// changed since the plan was prepared.
func (Disk) Apply(ctx context.Context, plan *Plan) (*Result, error) {
	err := parallel(len(plan.Files), func(i int) error {
		f := &plan.Files[i]
		if err := unchanged(f.Path, f.Rel, f.Existed, f.Before, f.fromDisk, f.lstat); err != nil {
			return err
		}
		if f.MoveTo != "" {
			return unchanged(f.MoveTo, f.RelTo, f.DestExisted, f.DestBefore, f.fromDisk, f.destLstat)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var writes []diskWrite
	var removals []diskRemoval
	for i := range plan.Files {
		f := &plan.Files[i]
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		switch {
		case f.Deleted():
			removals = append(removals, diskRemoval{path: f.Path, before: f.Before, mode: mode})
		case f.MoveTo != "":
			w := diskWrite{target: writeTarget(f.MoveTo, f.fromDisk, f.destLstat), content: f.After, mode: mode, existed: f.DestExisted, before: f.DestBefore, oldMode: mode}
			writes = append(writes, w)
			removals = append(removals, diskRemoval{path: f.Path, before: f.Before, mode: mode})
		default:
			w := diskWrite{target: writeTarget(f.Path, f.fromDisk, f.lstat), content: f.After, mode: mode, existed: f.Existed, before: f.Before, oldMode: mode}
			writes = append(writes, w)
		}
	}

	var created []string // directories made for new files, outermost first
	known := map[string]bool{}
	cleanup := func() {
		for _, w := range writes {
			if w.tmp != "" {
				os.Remove(w.tmp)
			}
		}
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i]) // only succeeds while empty
		}
	}
	for i := range writes {
		dir := filepath.Dir(writes[i].target)
		if known[dir] {
			continue
		}
		made, err := mkdirs(dir)
		known[dir] = err == nil
		created = append(created, made...)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("create directory for %s: %w; nothing was changed", writes[i].target, err)
		}
	}
	// Staging waits on the disk: write several temporary files at once.
	err = parallel(len(writes), func(i int) error {
		w := &writes[i]
		var err error
		if w.tmp, err = stage(filepath.Dir(w.target), filepath.Base(w.target), w.content, w.mode); err != nil {
			return fmt.Errorf("write %s: %w; nothing was changed", w.target, err)
		}
		return nil
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		cleanup()
		return nil, fmt.Errorf("patch cancelled before writing: %w; nothing was changed", err)
	}

	// Commit. Past this point every step is undone if a later one fails.
	var renamed, removed int
	rollback := func(cause error) error {
		var errs []error
		for _, w := range writes[:renamed] {
			var err error
			if w.existed {
				err = writeAtomic(w.target, w.before, w.oldMode)
			} else {
				err = os.Remove(w.target)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		for _, r := range removals[:removed] {
			if err := writeAtomic(r.path, r.before, r.mode); err != nil {
				errs = append(errs, err)
			}
		}
		cleanup()
		if len(errs) > 0 {
			return fmt.Errorf("%w; restoring the files already changed also failed: %v", cause, errors.Join(errs...))
		}
		return fmt.Errorf("%w; every file was restored, nothing was changed", cause)
	}
	for i := range writes {
		if err := renameFile(writes[i].tmp, writes[i].target); err != nil {
			return nil, rollback(fmt.Errorf("replace %s: %w", writes[i].target, err))
		}
		writes[i].tmp = ""
		renamed++
	}
	for _, r := range removals {
		if err := removeFile(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, rollback(fmt.Errorf("delete %s: %w", r.path, err))
		}
		removed++
	}
	for _, f := range plan.Files {
		for _, d := range f.PruneDirs {
			if os.Remove(d) != nil { // not empty: stop
				break
			}
		}
	}
	return allLanded(plan), nil
}

// unchanged checks that a file still is what the plan was computed from.
// When the plan came from the disk, an identical Lstat (same file, size and
// modification time) is enough, as git's index trusts it; otherwise the
// content is compared.
func unchanged(path, rel string, existed bool, before string, fromDisk bool, was fs.FileInfo) error {
	if fromDisk && was != nil {
		if now, err := os.Lstat(path); err == nil && os.SameFile(was, now) && now.Size() == was.Size() && now.ModTime().Equal(was.ModTime()) && now.Mode() == was.Mode() {
			return nil
		}
	}
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w; nothing was changed", rel, err)
	}
	if exists != existed || string(data) != before {
		return fmt.Errorf("%s changed on disk since the patch was checked; nothing was changed (run the patch again)", rel)
	}
	return nil
}

// writeTarget is where writing path should land: through a symlink to its
// target, so the link itself survives.
func writeTarget(path string, known bool, info fs.FileInfo) string {
	if !known {
		info, _ = os.Lstat(path)
	}
	if info != nil && info.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
	}
	return path
}

// mkdirs creates dir and its missing parents, returning those it created.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}

// stage writes content to a new temporary file in dir and returns its name.
// It calls the system directly: os.CreateTemp also registers the descriptor
// with the runtime poller, which costs more system calls than the write of a
// source file, and a patch writes hundreds of them.
func stage(dir, base, content string, mode fs.FileMode) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".warden-"+strconv.FormatUint(uint64(rand.Uint32()), 36))
		fd, err := ignoringEINTR(func() (int, error) {
			return syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(mode.Perm()))
		})
		if errors.Is(err, syscall.EEXIST) && try < 100 {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "create", Path: name, Err: err}
		}
		werr := writeAll(fd, content)
		// Open applied the umask; the file must have the mode asked for.
		cerr := syscall.Fchmod(fd, uint32(mode.Perm()))
		if err := errors.Join(werr, cerr, syscall.Close(fd)); err != nil {
			syscall.Unlink(name)
			return "", &fs.PathError{Op: "write", Path: name, Err: err}
		}
		return name, nil
	}
}

func writeAll(fd int, content string) error {
	data := unsafe.Slice(unsafe.StringData(content), len(content)) // only read
	for len(data) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// readFile reads a whole file, with as few system calls as stage writes one.
func readFile(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	buf := make([]byte, 0, int(st.Size)+1) // one more byte sees the end at once
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func ignoringEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// writeAtomic replaces path with content through a temporary file.
func writeAtomic(path, content string, mode fs.FileMode) error {
	if _, err := mkdirs(filepath.Dir(path)); err != nil {
		return err
	}
	tmp, err := stage(filepath.Dir(path), filepath.Base(path), content, mode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
