package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Disk is the Workspace of files on disk (the CLI, and tests). It applies a
// plan all or nothing, even when Warden is killed half-way: it journals the
// change first (see journal), stages every new content in a temporary file
// next to its target, records the commit, then renames them all into place.
// A failure before the commit record rolls the change back, one after it
// finishes the change: here, or at the next Warden start (Recover).
type Disk struct {
	// Journal is the directory of the journals; "" is JournalDir().
	Journal string
}

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

// diskWrite is one file to be written.
type diskWrite struct {
	target  string // where it lands (symlinks resolved)
	content string
	mode    fs.FileMode
	existed bool
	before  string
	// beforeMode is the mode the write changes (0: it keeps the mode).
	beforeMode fs.FileMode
}

// diskRemoval is one file to be removed.
type diskRemoval struct {
	path   string
	before string
	mode   fs.FileMode
}

// Apply writes the plan to disk, all or nothing. It first checks that no file
// changed since the plan was prepared.
func (d Disk) Apply(ctx context.Context, plan *Plan) (*Result, error) {
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
	var prune []string
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
			writes = append(writes, diskWrite{target: writeTarget(f.MoveTo, f.fromDisk, f.destLstat), content: f.After, mode: mode, existed: f.DestExisted, before: f.DestBefore})
			removals = append(removals, diskRemoval{path: f.Path, before: f.Before, mode: mode})
		default:
			w := diskWrite{target: writeTarget(f.Path, f.fromDisk, f.lstat), content: f.After, mode: mode, existed: f.Existed, before: f.Before}
			if f.SetsMode {
				w.beforeMode = diskMode(f.Path)
			}
			writes = append(writes, w)
		}
		prune = append(prune, f.PruneDirs...)
	}

	j, err := d.begin(plan, writes, removals, prune)
	if err != nil {
		return nil, fmt.Errorf("record the change before making it: %w; nothing was changed", err)
	}
	if err := stageAll(ctx, j, writes); err != nil {
		return nil, j.abandon(err)
	}
	if err := j.commit(); err != nil {
		return nil, j.abandon(fmt.Errorf("record the commit: %w", err))
	}
	// Committed: from here a failure rolls back every step, and a kill
	// finishes them at the next start.
	for i, w := range writes {
		if err := renameFile(j.entries[i].Tmp, w.target); err != nil {
			return nil, j.abandon(fmt.Errorf("replace %s: %w", w.target, err))
		}
	}
	for _, r := range removals {
		if err := removeFile(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, j.abandon(fmt.Errorf("delete %s: %w", r.path, err))
		}
	}
	pruneEmpty(prune)
	dirs := map[string]bool{}
	for _, e := range j.entries {
		dirs[filepath.Dir(e.Path)] = true
	}
	err = syncDirs(dirs)
	if err == nil {
		err = plan.checkpoint.landed(plan)
	}
	if err != nil {
		// The files landed; the journal stays for the next start to settle.
		j.release(false)
		return allLanded(plan), fmt.Errorf("the patch landed, but %w", err)
	}
	return allLanded(plan), j.finish()
}

// begin journals the change durably before anything is written.
func (d Disk) begin(plan *Plan, writes []diskWrite, removals []diskRemoval, prune []string) (*journal, error) {
	dir := d.Journal
	if dir == "" {
		dir = JournalDir()
	}
	root, _ := filepath.Abs(plan.Root)
	hdr := journalHeader{Root: root, Summary: plan.Summary(), Created: time.Now().UTC(),
		Dirs: missingParents(writes), Prune: prune, Checkpoint: plan.checkpoint.ref()}
	j, err := beginJournal(dir, hdr)
	if err != nil {
		return nil, err
	}
	j.entries = make([]journalEntry, len(writes)+len(removals))
	parallel(len(writes), func(i int) error {
		w := writes[i]
		j.entries[i] = journalEntry{Path: w.target, Tmp: tmpName(w.target, j.hdr.ID, i), Existed: w.existed, Mode: w.mode, BeforeMode: w.beforeMode, AfterSum: sum([]byte(w.content)), before: w.before}
		return nil
	})
	for k, r := range removals {
		n := len(writes) + k
		j.entries[n] = journalEntry{Remove: true, Path: r.path, Tmp: tmpName(r.path, j.hdr.ID, n), Existed: true, Mode: r.mode, before: r.before}
	}
	if err := j.writeIntent(); err != nil {
		j.release(true)
		return nil, err
	}
	return j, nil
}

// stageAll creates the journal's directories and writes every new content
// to its temporary file, flushed: the commit record must not outlive them.
func stageAll(ctx context.Context, j *journal, writes []diskWrite) error {
	for _, dir := range j.hdr.Dirs {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	// Staging waits on the disk: write several temporary files at once.
	err := parallel(len(writes), func(i int) error {
		if err := stageAs(j.entries[i].Tmp, writes[i].content, writes[i].mode, true); err != nil {
			return fmt.Errorf("write %s: %w", writes[i].target, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("patch cancelled before writing: %w", err)
	}
	return nil
}

// abandon rolls back a change that failed, and says what became of it.
func (j *journal) abandon(cause error) error {
	committed := j.committed()
	if err := j.uncommit(); err != nil {
		j.release(false)
		return fmt.Errorf("%w; the change is half done and cannot be rolled back now (%v): Warden finishes it at its next start", cause, err)
	}
	kept, err := j.rollBack()
	if err != nil {
		j.release(false)
		return fmt.Errorf("%w; restoring the files already changed also failed: %v; Warden tries again at its next start", cause, err)
	}
	j.finish()
	switch {
	case len(kept) > 0:
		return fmt.Errorf("%w; every file Warden changed was restored, but these changed meanwhile and were left alone: %s", cause, strings.Join(kept, ", "))
	case committed:
		return fmt.Errorf("%w; every file was restored, nothing was changed", cause)
	}
	return fmt.Errorf("%w; nothing was changed", cause)
}

// missingParents lists the directories writing the files needs created,
// each parent before its children.
func missingParents(writes []diskWrite) []string {
	known := map[string]bool{}
	var out []string
	for _, w := range writes {
		var missing []string
		for d := filepath.Dir(w.target); !known[d]; d = filepath.Dir(d) {
			known[d] = true
			if exists(d) {
				break
			}
			missing = append(missing, d)
			if filepath.Dir(d) == d {
				break
			}
		}
		for i := len(missing) - 1; i >= 0; i-- {
			out = append(out, missing[i])
		}
	}
	return out
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
