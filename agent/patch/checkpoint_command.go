package patch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/changes"
)

// KindCommand marks a checkpoint that records what a command changed (a
// patch's has no kind). Its files' previous contents are named, not inline:
// a blob in the change store, or an object in the user's git repository.
const KindCommand = "command"

// DefaultStoreCap bounds the change store: past it, the content no
// checkpoint needs goes, then the oldest checkpoints' content, oldest first.
const DefaultStoreCap = 1 << 30

// Store is where command checkpoints keep file contents: beside the
// checkpoints, in Warden's state directory.
func (c *Checkpoints) Store() *changes.Store {
	return changes.OpenStore(filepath.Join(c.dir, "store"))
}

// RecordCommand adds what a command changed in one root to that root's
// history, so that Undo reverts it as it reverts a patch. A change with no
// file is not recorded.
func (c *Checkpoints) RecordCommand(ch *changes.Change, summary string) (*Checkpoint, error) {
	if len(ch.Files) == 0 {
		return nil, nil
	}
	cp := &Checkpoint{Kind: KindCommand, Root: ch.Root, Created: time.Now().UTC(), Summary: summary, Lost: ch.Lost(), Overlapped: ch.Overlapped}
	cp.ID = cp.Created.Format("20060102T150405.000000000")
	for _, f := range ch.Files {
		existed, afterExists, node, isNode := splitNode(ch.Root, f)
		if isNode {
			cp.Nodes = append(cp.Nodes, node)
		}
		if !existed && !afterExists {
			continue
		}
		s := Snapshot{
			Path: filepath.Join(ch.Root, filepath.FromSlash(f.Rel)), Rel: f.Rel,
			Existed: existed, AfterExists: afterExists, Mode: f.AfterMode.Perm(),
		}
		if afterExists {
			s.AfterSum, s.AfterMode = f.AfterSum, f.AfterMode.Perm()
		}
		if existed {
			s.Mode, s.Blob, s.GitObject, s.GitDir, s.Lost, s.Size = f.Before.Mode.Perm(), f.Before.Blob, f.Before.GitObject, f.Before.GitDir, f.Before.Lost, f.Before.Size
		} else {
			s.Dirs = node.Dirs
		}
		cp.Files = append(cp.Files, s)
	}
	if err := c.save(cp); err != nil {
		return nil, err
	}
	c.boundStore(c.Store().Copied())
	return cp, nil
}

// OverlapError is an undo refused because the command ran at the same time
// as others in the workspace: its record is the difference between a look
// before and one after, so it may hold their changes too, which the undo
// would revert.
type OverlapError struct {
	Summary string
	Others  []string
}

// Is makes errors.Is(err, ErrNeedsForce) hold.
func (e *OverlapError) Is(target error) bool { return target == ErrNeedsForce }

func (e *OverlapError) Error() string {
	return fmt.Sprintf("cannot undo %q: it ran at the same time as %s in this workspace, and what that changed meanwhile may be recorded as this command's, and reverted with it; check the files it names, then undo again with force to revert them all", e.Summary, strings.Join(e.Others, " and "))
}

// loadPreimages reads back the previous contents a command checkpoint
// names. Files whose content was not kept are left out of the undo (they
// are in cp.Lost); content that has gone since (git garbage-collected it,
// the store was cleared) refuses the undo, naming the files, unless force,
// which leaves those files as they are.
func (c *Checkpoints) loadPreimages(cp *Checkpoint, force bool) error {
	if cp.Kind != KindCommand {
		return nil
	}
	byRepo := map[string][]string{}
	for _, s := range cp.Files {
		if s.GitObject != "" {
			byRepo[s.GitDir] = append(byRepo[s.GitDir], s.GitObject)
		}
	}
	objects := map[string][]byte{}
	var gitErr error
	for gitDir, oids := range byRepo {
		objs, err := changes.GitObjects(gitDir, oids)
		gitErr = errors.Join(gitErr, err)
		for k, v := range objs {
			objects[k] = v
		}
	}
	store := c.Store()
	kept := cp.Files[:0]
	var gone []string
	for _, s := range cp.Files {
		if !s.Existed {
			kept = append(kept, s)
			continue
		}
		var data []byte
		var err error
		switch {
		case s.Lost != "":
			continue // named in cp.Lost: not recoverable
		case s.Blob != "":
			data, err = store.Get(s.Blob)
		case s.GitObject != "":
			var ok bool
			if data, ok = objects[s.GitObject]; !ok {
				err = errors.New("not in the repository's objects")
			} else if int64(len(data)) != s.Size {
				// A clean/smudge filter (LFS, line endings) stands between
				// git's blob and the file's bytes.
				err = errors.New("git's copy is not the file's bytes")
			}
		}
		if err != nil {
			gone = append(gone, s.Rel)
			continue
		}
		s.Content = data
		if s.Content == nil {
			s.Content = []byte{}
		}
		kept = append(kept, s)
	}
	cp.Files = kept
	if len(gone) > 0 && !force {
		msg := fmt.Sprintf("cannot undo %q: the previous content of %s is no longer kept", cp.Summary, strings.Join(gone, ", "))
		if gitErr != nil {
			msg += " (" + gitErr.Error() + ")"
		}
		return errors.New(msg + "; undo again with force to revert the other files and leave these as they are")
	}
	return nil
}

// History lists the root's recorded changes, newest first, at most max
// (0: all).
func (c *Checkpoints) History(root string, max int) ([]*Checkpoint, error) {
	root, _ = filepath.Abs(root)
	dir := c.rootDir(root)
	names := c.list(dir)
	if max > 0 && len(names) > max {
		names = names[len(names)-max:]
	}
	out := make([]*Checkpoint, 0, len(names))
	for i := len(names) - 1; i >= 0; i-- {
		cp, err := c.load(filepath.Join(dir, names[i]))
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

// Clear forgets every recorded change of every workspace and the content
// kept for them.
func (c *Checkpoints) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return os.RemoveAll(c.dir)
}

// boundStore keeps the store under DefaultStoreCap. It counts what runs
// add in a small file, so that the store is measured (a walk of it) only
// when the count says it may be over.
func (c *Checkpoints) boundStore(added int64) {
	store := c.Store()
	counter := filepath.Join(store.Dir(), "size")
	data, _ := os.ReadFile(counter)
	size, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	size += added
	if size > DefaultStoreCap {
		size = c.TrimStore(DefaultStoreCap)
	}
	os.MkdirAll(store.Dir(), 0o700)
	os.WriteFile(counter, []byte(strconv.FormatInt(size, 10)), 0o600)
}

// TrimStore frees the content no checkpoint names, then evicts the oldest
// command checkpoints until the store holds at most limit bytes. It
// returns the store's size after.
func (c *Checkpoints) TrimStore(limit int64) int64 {
	store := c.Store()
	all := c.allCommandCheckpoints()
	for {
		keep := map[string]bool{}
		for _, e := range all {
			for _, s := range e.cp.Files {
				if s.Blob != "" {
					keep[s.Blob] = true
				}
			}
		}
		store.Sweep(keep, time.Minute)
		size, _ := store.Usage()
		if size <= limit || len(all) == 0 {
			return size
		}
		os.Remove(all[0].path) // the oldest
		all = all[1:]
	}
}

type storedCheckpoint struct {
	path string
	cp   *Checkpoint
}

// allCommandCheckpoints lists the command checkpoints of every workspace
// that still need content, oldest first.
func (c *Checkpoints) allCommandCheckpoints() []storedCheckpoint {
	var out []storedCheckpoint
	roots, _ := os.ReadDir(c.dir)
	for _, r := range roots {
		if !r.IsDir() || r.Name() == "store" {
			continue
		}
		for _, name := range c.list(filepath.Join(c.dir, r.Name())) {
			p := filepath.Join(c.dir, r.Name(), name)
			if cp, err := c.load(p); err == nil && cp.Kind == KindCommand && cp.Undone == nil {
				out = append(out, storedCheckpoint{p, cp})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cp.Created.Before(out[j].cp.Created) })
	return out
}

// LastOf is the most recent change not undone yet among the roots, and its
// root; cp is nil when there is none.
func (c *Checkpoints) LastOf(roots ...string) (root string, cp *Checkpoint, err error) {
	for _, r := range roots {
		last, err := c.Last(r)
		if err != nil {
			return "", nil, err
		}
		if last != nil && (cp == nil || last.Created.After(cp.Created)) {
			root, cp = r, last
		}
	}
	return root, cp, nil
}
