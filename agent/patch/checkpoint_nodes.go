package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/internal/changes"
)

// Node is a symbolic link or an empty directory that a command made,
// removed or changed. Undo puts nodes back on disk itself, around the plan
// that puts the files back: a plan knows files only, writes through links,
// and an editor can make neither.
type Node struct {
	Path   string    `json:"path"`
	Rel    string    `json:"rel"`
	Before NodeState `json:"before"`
	After  NodeState `json:"after"`
	// Dirs are the directories a created node is in that the command may
	// have made, innermost first: undo removes those it leaves empty.
	Dirs []string `json:"dirs,omitempty"`
}

// NodeState is a link (its target), an empty directory (with its
// permission bits), or neither (the zero value).
type NodeState struct {
	Link string      `json:"link,omitempty"`
	Dir  bool        `json:"dir,omitempty"`
	Mode fs.FileMode `json:"mode,omitempty"`
}

func (n NodeState) present() bool { return n.Link != "" || n.Dir }

// nodeState is the node an entry of mode (a link to link, or a directory) is.
func nodeState(mode fs.FileMode, link string) NodeState {
	if mode.IsDir() {
		return NodeState{Dir: true, Mode: mode.Perm()}
	}
	return NodeState{Link: link}
}

// isNode reports a mode that is a node's, not a file's.
func isNode(mode fs.FileMode) bool { return mode&fs.ModeSymlink != 0 || mode.IsDir() }

// splitNode divides a changed entry into its file part (whether the file
// existed before and after) and its node part: a file replaced by a link
// has both (the file goes, the link comes). ok is false when there is no
// node to undo, or none that can be: a link whose target could not be
// read is named in cp.Lost, and left as it is.
func splitNode(root string, f changes.File) (fileBefore, fileAfter bool, n Node, ok bool) {
	n = Node{Path: filepath.Join(root, filepath.FromSlash(f.Rel)), Rel: f.Rel}
	lost := false
	if f.Existed && isNode(f.Before.Mode) {
		n.Before, lost = nodeState(f.Before.Mode, f.Before.Link), f.Before.Lost != ""
	} else {
		fileBefore = f.Existed
	}
	if f.AfterExists && isNode(f.AfterMode) {
		n.After = nodeState(f.AfterMode, f.AfterLink)
	} else {
		fileAfter = f.AfterExists
	}
	if !f.Existed {
		for _, d := range f.Dirs {
			n.Dirs = append(n.Dirs, filepath.Join(root, filepath.FromSlash(d)))
		}
	}
	return fileBefore, fileAfter, n, !lost && (n.Before.present() || n.After.present())
}

// nodesEditedSince names the nodes that are no longer as the command left
// them: undoing would throw the user's change away.
func (cp *Checkpoint) nodesEditedSince() []string {
	var out []string
	for _, n := range cp.Nodes {
		if !n.After.matchesDisk(n.Path, n.Before.Dir) {
			out = append(out, n.Rel)
		}
	}
	return out
}

// matchesDisk reports that path is this state: the same link, an empty
// directory with the same bits (any directory when it was one before the
// command too: its content is files, undone as such), or neither a link
// nor a directory.
func (n NodeState) matchesDisk(path string, wasDir bool) bool {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return !n.present()
	case n.Link != "":
		target, err := os.Readlink(path)
		return err == nil && target == n.Link
	case n.Dir:
		return fi.IsDir() && fi.Mode().Perm() == n.Mode && (wasDir || changes.IsEmptyDir(path))
	}
	return fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir()
}

// clearNodes removes, before the files are put back, the links and empty
// directories the command made where there was none of the same kind
// (never following a link): a file may have to come back in their place.
func (cp *Checkpoint) clearNodes() error {
	for _, n := range cp.Nodes {
		if !n.After.present() || n.Before.Dir && n.After.Dir {
			continue
		}
		if n.After.Link != "" && n.Before.Link != "" {
			continue // replaced in one step afterwards
		}
		if err := os.Remove(n.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", n.Rel, err)
		}
	}
	return nil
}

// unclearNodes puts back what clearNodes removed (its temporary links
// named by journal id): the files' undo failed or was never committed.
func (cp *Checkpoint) unclearNodes(id string) error {
	var errs []error
	for i, n := range cp.Nodes {
		var err error
		switch {
		case !n.After.present() || n.Before.Dir && n.After.Dir || n.After.Link != "" && n.Before.Link != "":
		case n.After.Link != "":
			err = replaceWithLink(n.Path, n.After.Link, nodeTmp(n, id, i))
		default:
			err = restoreDir(n.Path, n.After.Mode)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("put back %s as the command left it: %w", n.Rel, err))
		}
	}
	return errors.Join(errs...)
}

// restoreNodes puts back, once the files are, the links and empty
// directories the command removed or changed, and removes the directories
// made for the ones it created. Its temporary links are named by journal id.
func (cp *Checkpoint) restoreNodes(id string) error {
	var errs []error
	for i, n := range cp.Nodes {
		var err error
		switch {
		case n.Before.Link != "":
			err = replaceWithLink(n.Path, n.Before.Link, nodeTmp(n, id, i))
		case n.Before.Dir:
			err = restoreDir(n.Path, n.Before.Mode)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("put back %s: %w", n.Rel, err))
		}
	}
	for _, n := range cp.Nodes {
		if !n.Before.present() {
			pruneEmpty(n.Dirs)
		}
	}
	return errors.Join(errs...)
}

// replaceWithLink makes path a link to target in one rename of tmp, which
// replaces whatever link or file is there without following it. A tmp
// left by a killed Warden is replaced.
func replaceWithLink(path, target, tmp string) error {
	if _, err := mkdirs(filepath.Dir(path)); err != nil {
		return err
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// restoreDir makes path a directory with mode (beyond the umask). A link
// there is not followed: chmod would change what it points at.
func restoreDir(path string, mode fs.FileMode) error {
	if _, err := mkdirs(path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory but a %v", path, fi.Mode().Type())
	}
	return os.Chmod(path, mode)
}

// nodeResults are the nodes as an undo's result lists them.
func (cp *Checkpoint) nodeResults() []FileResult {
	var out []FileResult
	for _, n := range cp.Nodes {
		kind := Update
		switch {
		case !n.Before.present():
			kind = Delete
		case !n.After.present():
			kind = Add
		}
		name := n.Rel
		if n.Before.Dir || (!n.Before.present() && n.After.Dir) {
			name += "/"
		}
		out = append(out, FileResult{Path: name, Kind: kind, Status: Landed})
	}
	return out
}

// nodeSource hides from the plan the paths where the command left a node:
// the plan reads there what the file part of the change left (nothing),
// not what a link points to.
type nodeSource struct {
	Workspace
	nodes map[string]Node
}

func (s nodeSource) ReadFile(path string) ([]byte, int32, bool, error) {
	if n, ok := s.nodes[path]; ok && n.After.present() {
		if fi, err := os.Lstat(path); err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
			return nil, 0, false, &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
		}
	}
	return s.Workspace.ReadFile(path)
}

// undoWithNodes reverts a command checkpoint that changed links or empty
// directories: every check first (files and nodes alike), then the nodes
// in the way of files go, the files come back, and the nodes do. The node
// steps are journaled (see beginNodes): a kill anywhere leaves the links
// and directories all as the command left them or all as before it, as
// the files are, once the next Warden start settles them.
func (c *Checkpoints) undoWithNodes(ctx context.Context, ws Workspace, cp *Checkpoint, force bool) (*Result, error) {
	byPath := map[string]Node{}
	for _, n := range cp.Nodes {
		byPath[n.Path] = n
	}
	edited := cp.nodesEditedSince()
	plan, err := cp.revertPlan(nodeSource{ws, byPath}, force)
	var files *EditedSinceError
	switch {
	case errors.As(err, &files):
		files.Files = append(files.Files, edited...)
		return nil, files
	case err != nil:
		return nil, err
	case len(edited) > 0 && !force:
		return nil, &EditedSinceError{Summary: cp.Summary, Files: edited}
	}
	j, err := c.beginNodes(journalDirOf(ws), cp)
	if err != nil {
		return nil, fmt.Errorf("undo %q: record the undo of its links and directories before making it: %w; nothing was changed", cp.Summary, err)
	}
	if err := cp.clearNodes(); err != nil {
		return nil, c.rollBackNodes(j, cp, fmt.Errorf("undo %q: %w", cp.Summary, err))
	}
	res := &Result{}
	if len(plan.Files) > 0 {
		plan.checkpoint = &checkpointLink{cps: c, cp: cp, undo: true}
		if res, err = ws.Apply(ctx, plan); err != nil {
			return nil, c.failedFiles(j, cp, fmt.Errorf("undo %q: %w", cp.Summary, err))
		}
	}
	// Undone is the commit point: recovery puts the nodes back from here.
	// (An editor's workspace put the files back itself: its nodes follow.)
	var marked error
	if res.Complete() && (plan.checkpoint == nil || !plan.checkpoint.settled) {
		marked = c.markUndone(cp)
	}
	if marked != nil && len(plan.Files) == 0 {
		return nil, c.rollBackNodes(j, cp, fmt.Errorf("undo %q: %w", cp.Summary, marked))
	}
	if err := cp.restoreNodes(j.hdr.ID); err != nil {
		j.release(false) // the next start tries again
		return res, errors.Join(fmt.Errorf("undo %q: the files are back, but %w; Warden tries again at its next start", cp.Summary, err), marked)
	}
	res.Files = append(res.Files, cp.nodeResults()...)
	// As a files' journal: what it redoes is durable before it goes.
	if err := syncDirs(nodeDirs(cp.Nodes)); err != nil {
		j.release(false)
		return res, errors.Join(marked, fmt.Errorf("undo %q: %w; Warden settles the links and directories again at its next start", cp.Summary, err))
	}
	return res, errors.Join(marked, j.finish())
}

// journalDirOf is where ws journals its changes, and an undo its nodes.
func journalDirOf(ws Workspace) string {
	if d, ok := ws.(Disk); ok && d.Journal != "" {
		return d.Journal
	}
	return JournalDir()
}

// rollBackNodes puts the command's nodes back after a failed undo; if it
// cannot, the journal stays for the next start to try again.
func (c *Checkpoints) rollBackNodes(j *journal, cp *Checkpoint, cause error) error {
	if err := cp.unclearNodes(j.hdr.ID); err != nil {
		j.release(false)
		return fmt.Errorf("%w; and the links and directories it removed first could not all be put back (%v): Warden tries again at its next start", cause, err)
	}
	return errors.Join(cause, j.finish())
}

// failedFiles settles the nodes after the files' undo failed: rolled
// back unless the files landed and only their record failed (Undone is
// set in memory then); the next start settles those as their journal is.
func (c *Checkpoints) failedFiles(j *journal, cp *Checkpoint, cause error) error {
	if cp.Undone == nil {
		return c.rollBackNodes(j, cp, cause)
	}
	if err := cp.restoreNodes(j.hdr.ID); err != nil {
		cause = fmt.Errorf("%w; and the links and directories could not all be put back (%v)", cause, err)
	}
	j.release(false)
	return fmt.Errorf("%w: Warden settles the links and directories at its next start", cause)
}
