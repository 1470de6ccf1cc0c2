package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
