package patch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Checkpoints records, before each patch lands, every touched file's previous
// content and existence, so the last change can be undone. They are files
// under a state directory (config.StateDir()/checkpoints), one directory per
// workspace root, so they survive a restart of the server.
type Checkpoints struct {
	dir  string
	keep int
	mu   sync.Mutex
}

// NewCheckpoints stores checkpoints under dir, keeping the last 50 per workspace.
func NewCheckpoints(dir string) *Checkpoints { return &Checkpoints{dir: dir, keep: 50} }

// Checkpoint is the state before one patch, and a fingerprint of the state it
// left, to notice later edits.
type Checkpoint struct {
	ID      string     `json:"id"`
	Root    string     `json:"root"`
	Created time.Time  `json:"created"`
	Summary string     `json:"summary"`
	Files   []Snapshot `json:"files"`
	// Undone is when undo reverted this change; the record stays so that a
	// second undo can say so rather than claim nothing was ever recorded.
	Undone *time.Time `json:"undone,omitempty"`
	// Kind is KindCommand for what a command changed, "" for a patch.
	Kind string `json:"kind,omitempty"`
	// Lost names the changed files whose previous content was not kept.
	Lost []string `json:"lost,omitempty"`
	// Nodes are the links and empty directories a command changed.
	Nodes []Node `json:"nodes,omitempty"`
	// Overlapped name the runs beside the command, whose changes the
	// record may hold too (see OverlapError).
	Overlapped []string `json:"overlapped,omitempty"`
}

// Snapshot is one file's state before and after a patch.
type Snapshot struct {
	Path        string      `json:"path"`
	Rel         string      `json:"rel"`
	Existed     bool        `json:"existed"`
	Content     []byte      `json:"content,omitempty"`
	Mode        fs.FileMode `json:"mode,omitempty"`
	AfterExists bool        `json:"afterExists"`
	AfterSum    string      `json:"afterSum,omitempty"`
	// Dirs are the directories the patch had to create for the file, which
	// undo removes again if they are empty.
	Dirs []string `json:"dirs,omitempty"`
	// A command checkpoint names the previous content instead of holding
	// it: a blob in the change store, or a git object in the repository at
	// GitDir; Lost says why neither was kept.
	Blob      string `json:"blob,omitempty"`
	GitObject string `json:"gitObject,omitempty"`
	GitDir    string `json:"gitDir,omitempty"`
	Lost      string `json:"lost,omitempty"`
	// Size is the file's size before the command: git's blob must have it.
	Size int64 `json:"size,omitempty"`
	// AfterMode is a command checkpoint's file's permission bits after the
	// command: a change of them since is the user's, which undo keeps.
	AfterMode fs.FileMode `json:"afterMode,omitempty"`
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func (c *Checkpoints) rootDir(root string) string {
	h := sha256.Sum256([]byte(root))
	return filepath.Join(c.dir, hex.EncodeToString(h[:8]))
}

// record saves the state the plan is about to change.
func (c *Checkpoints) record(plan *Plan) (*Checkpoint, error) {
	cp := &Checkpoint{Root: plan.Root, Created: time.Now().UTC(), Summary: plan.Summary()}
	cp.ID = cp.Created.Format("20060102T150405.000000000")
	for _, f := range plan.Files {
		cp.Files = append(cp.Files, Snapshot{Path: f.Path, Rel: f.Rel, Existed: f.Existed, Content: []byte(f.Before), Mode: f.Mode, Dirs: missingDirs(f.Path, plan.Root)})
		if f.MoveTo != "" {
			cp.Files = append(cp.Files, Snapshot{Path: f.MoveTo, Rel: f.RelTo, Existed: f.DestExisted, Content: []byte(f.DestBefore), Mode: f.Mode, Dirs: missingDirs(f.MoveTo, plan.Root)})
		}
	}
	return cp, c.save(cp)
}

// settle fingerprints what each file looks like now that the patch landed,
// drops files it did not change, and deletes the checkpoint if nothing changed.
// Files the workspace reports as not landed are dropped even if they differ
// now: that difference is someone else's edit, which undo must not revert.
func (c *Checkpoints) settle(cp *Checkpoint, src Source, plan *Plan, res *Result) error {
	landed := map[string]bool{}
	for i, f := range plan.Files {
		if res == nil || i >= len(res.Files) || res.Files[i].Status == NotLanded {
			continue
		}
		landed[f.Path] = true
		if f.MoveTo != "" {
			landed[f.MoveTo] = true
		}
	}
	kept := cp.Files[:0]
	for _, s := range cp.Files {
		if !landed[s.Path] {
			continue
		}
		data, _, _, err := src.ReadFile(s.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: read %s: %w", s.Rel, err)
		}
		if exists == s.Existed && (!exists || string(data) == string(s.Content)) {
			continue // untouched
		}
		s.AfterExists = exists
		if exists {
			s.AfterSum = sum(data)
		}
		kept = append(kept, s)
	}
	cp.Files = kept
	if len(kept) == 0 {
		return c.remove(cp)
	}
	return c.save(cp)
}

func (c *Checkpoints) save(cp *Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	dir := c.rootDir(cp.Root)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, cp.ID+".json"), string(data), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.prune(dir)
	return nil
}

func (c *Checkpoints) prune(dir string) {
	names := c.list(dir)
	for len(names) > c.keep {
		os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
}

func (c *Checkpoints) list(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

func (c *Checkpoints) remove(cp *Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := os.Remove(filepath.Join(c.rootDir(cp.Root), cp.ID+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Last returns the most recent checkpoint for the workspace root that is not
// undone yet, or nil.
func (c *Checkpoints) Last(root string) (*Checkpoint, error) {
	pending, _, err := c.newest(root)
	return pending, err
}

// newest returns the most recent checkpoint not undone yet, and the most
// recently undone one.
func (c *Checkpoints) newest(root string) (pending, undone *Checkpoint, err error) {
	root, _ = filepath.Abs(root)
	dir := c.rootDir(root)
	names := c.list(dir)
	for i := len(names) - 1; i >= 0 && pending == nil; i-- {
		cp, err := c.load(filepath.Join(dir, names[i]))
		if err != nil {
			return nil, nil, err
		}
		switch {
		case cp.Undone == nil:
			pending = cp
		case undone == nil || cp.Undone.After(*undone.Undone):
			undone = cp
		}
	}
	return pending, undone, nil
}

func (c *Checkpoints) load(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", filepath.Base(path), err)
	}
	return &cp, nil
}

// NothingToUndo is the error for a root with no pending change: an
// *AlreadyUndoneError naming the last undone change when there is one,
// else ErrNothingToUndo.
func (c *Checkpoints) NothingToUndo(roots ...string) error {
	var last *Checkpoint
	for _, root := range roots {
		_, undone, err := c.newest(root)
		if err != nil {
			return err
		}
		if undone != nil && (last == nil || undone.Undone.After(*last.Undone)) {
			last = undone
		}
	}
	if last == nil {
		return ErrNothingToUndo
	}
	return &AlreadyUndoneError{Summary: last.Summary, Undone: *last.Undone}
}

// AlreadyUndoneError is an undo with nothing left to revert because the
// recorded changes were undone already. It is also ErrNothingToUndo.
type AlreadyUndoneError struct {
	Summary string
	Undone  time.Time
}

func (e *AlreadyUndoneError) Error() string {
	return fmt.Sprintf("nothing to undo: Warden's last change (%s) was already undone at %s, and no older change is recorded", e.Summary, e.Undone.Local().Format("15:04:05"))
}

// Is makes errors.Is(err, ErrNothingToUndo) hold.
func (e *AlreadyUndoneError) Is(target error) bool { return target == ErrNothingToUndo }

// EditedSinceError is an undo refused because files changed after the patch.
type EditedSinceError struct {
	Summary string
	Files   []string
}

// ErrNeedsForce is what every undo refused only unless forced matches
// (errors.Is): files changed since (EditedSinceError), or the command ran
// beside another (OverlapError). Callers say how to force it.
var ErrNeedsForce = errors.New("undo refused unless forced")

// Is makes errors.Is(err, ErrNeedsForce) hold.
func (e *EditedSinceError) Is(target error) bool { return target == ErrNeedsForce }

func (e *EditedSinceError) Error() string {
	return fmt.Sprintf("cannot undo %q: %s changed since Warden's edit, and undoing would throw those changes away; undo again with force to do it anyway", e.Summary, strings.Join(e.Files, ", "))
}

// ErrNothingToUndo means no checkpoint is recorded for the workspace.
var ErrNothingToUndo = errors.New("nothing to undo: no Warden change is recorded for this workspace")

// Undo reverts the workspace's last recorded patch through ws. Unless force
// is set, it refuses when any of the files changed since the patch landed.
func (c *Checkpoints) Undo(ctx context.Context, ws Workspace, root string, force bool) (*Result, error) {
	cp, err := c.Last(root)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		return nil, c.NothingToUndo(root)
	}
	if len(cp.Overlapped) > 0 && !force {
		return nil, &OverlapError{Summary: cp.Summary, Others: cp.Overlapped}
	}
	if err := c.loadPreimages(cp, force); err != nil {
		return nil, err
	}
	if len(cp.Nodes) > 0 {
		return c.undoWithNodes(ctx, ws, cp, force)
	}
	plan, err := cp.revertPlan(ws, force)
	if err != nil {
		return nil, err
	}
	if len(plan.Files) == 0 {
		return &Result{}, c.markUndone(cp)
	}
	// Disk marks it undone with the files, before it forgets its journal.
	plan.checkpoint = &checkpointLink{cps: c, cp: cp, undo: true}
	res, err := ws.Apply(ctx, plan)
	if err != nil {
		return nil, fmt.Errorf("undo %q: %w", cp.Summary, err)
	}
	if res.Complete() && !plan.checkpoint.settled {
		if err := c.markUndone(cp); err != nil {
			return res, err
		}
	}
	return res, nil
}

// markUndone keeps the record of an undone change, without its pre-images.
func (c *Checkpoints) markUndone(cp *Checkpoint) error {
	now := time.Now().UTC()
	cp.Undone = &now
	for i := range cp.Files {
		cp.Files[i].Content = nil
		cp.Files[i].Blob, cp.Files[i].GitObject = "", ""
	}
	return c.save(cp)
}

// revertPlan builds the plan that puts every file back.
func (cp *Checkpoint) revertPlan(src Source, force bool) (*Plan, error) {
	plan := &Plan{Root: cp.Root}
	var edited []string
	for _, s := range cp.Files {
		data, version, open, err := src.ReadFile(s.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("undo: read %s: %w", s.Rel, err)
		}
		stale := open && cp.Kind == KindCommand && s.staleBuffer(exists, data)
		if stale {
			// The disk is what the undo reverts; the buffer already
			// shows the content it brings back.
			data, err = readFile(s.Path)
			exists, open, version = err == nil, false, 0
		}
		mode := diskMode(s.Path)
		if exists != s.AfterExists || (exists && sum(data) != s.AfterSum) || (exists && s.AfterMode != 0 && mode != s.AfterMode) {
			edited = append(edited, s.Rel)
		}
		f := FileEdit{Path: s.Path, Rel: s.Rel, Existed: exists, Before: string(data), Version: version, Open: open, Mode: s.Mode, OnDisk: stale}
		// A command may have changed only the permission bits (chmod): a
		// patch never does, and its record has no mode after to compare.
		f.SetsMode = cp.Kind == KindCommand && exists && s.Existed && mode != s.Mode.Perm()
		switch {
		case s.Existed:
			f.Change = &FileChange{Kind: Update, Path: s.Rel}
			if !exists {
				f.Change.Kind = Add
			}
			f.After = string(s.Content)
			if exists && f.Before != f.After {
				f.Edits = []Edit{minimalEdit(f.Before, f.After)}
			}
		case exists:
			f.Change = &FileChange{Kind: Delete, Path: s.Rel}
			f.PruneDirs = s.Dirs
		default:
			continue
		}
		if f.Change.Kind == Update && f.Before == f.After && !f.SetsMode {
			continue
		}
		plan.Files = append(plan.Files, f)
	}
	if len(edited) > 0 && !force {
		return nil, &EditedSinceError{Summary: cp.Summary, Files: edited}
	}
	return plan, nil
}

// staleBuffer reports an editor buffer that still shows the file as it
// was before the command: the editor did not reload what the command
// wrote or deleted. The disk then says whether anyone edited it since.
func (s *Snapshot) staleBuffer(exists bool, buffer []byte) bool {
	return s.Existed && exists && string(buffer) == string(s.Content)
}

// diskMode is the permission bits of the file at path, 0 when it cannot
// be had (the content check names that file).
func diskMode(path string) fs.FileMode {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}

// missingDirs lists the directories that writing path would create, innermost
// first.
func missingDirs(path, root string) []string {
	var out []string
	for d := filepath.Dir(path); d != root && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// minimalEdit replaces only the lines that differ between old and new, so an
// editor keeps its cursor and marks elsewhere in the buffer.
func minimalEdit(old, new string) Edit {
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	for p > 0 && old[p-1] != '\n' { // back to a line start
		p--
	}
	s := 0
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	for s > 0 && old[len(old)-s-1] != '\n' { // forward to a line end
		s--
	}
	return Edit{Start: p, End: len(old) - s, Text: new[p : len(new)-s], FirstLine: strings.Count(old[:p], "\n")}
}
