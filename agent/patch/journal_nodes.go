package patch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// An undo's node steps are journaled too, so that a kill cannot leave a
// command's links and empty directories half undone while its files are
// all undone or all not. Before the first link is removed, the undo
// writes ID.nodes in the journal directory (beside the files' journals,
// under the same ID.lock, held while it runs): the checkpoint whose nodes
// are in flux. The checkpoint's Undone is the commit point: the files'
// journal sets it with the files' commit, a node-only undo sets it itself
// once the command's nodes are cleared. A later Warden that finds ID.nodes
// unlocked settles it after the files' journals (Recover): an undone
// record gets its nodes put back as before the command (restoreNodes), any
// other the command's nodes back (unclearNodes). Both are idempotent and
// never follow a link; their temporary links are named by ID
// (nodeTmp), so recovery removes every one of them.

// beginNodes journals, before clearNodes, that cp's node steps are pending.
func (c *Checkpoints) beginNodes(dir string, cp *Checkpoint) (*journal, error) {
	ref := &checkpointRef{Dir: c.dir, Root: cp.Root, ID: cp.ID, Undo: true}
	j, err := beginJournal(dir, journalHeader{Version: journalVersion, Root: cp.Root, Summary: cp.Summary, Checkpoint: ref})
	if err != nil {
		return nil, err
	}
	if err := j.writeNodes(); err != nil {
		j.release(true)
		return nil, err
	}
	return j, nil
}

// writeNodes writes ID.nodes, flushed before it takes its name.
func (j *journal) writeNodes() error {
	data, err := json.Marshal(j.hdr)
	if err != nil {
		return err
	}
	return j.publish(".nodes", func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// nodeTmp is the temporary link that puts node i of journal id in place.
func nodeTmp(n Node, id string, i int) string { return tmpName(n.Path, id, i) }

// recoverNodes settles the node steps of journal id, if no running Warden
// holds it and its root is related to roots.
func recoverNodes(dir, id string, roots []string) (*Recovered, error) {
	j := &journal{dir: dir, hdr: journalHeader{ID: id}}
	if !exists(j.path(".nodes")) {
		return nil, nil
	}
	f, err := os.OpenFile(j.path(".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("interrupted undo %s: %w", id, err)
	}
	if err := lockNamed(f); err != nil {
		f.Close()
		return nil, nil // running, or just finished
	}
	j.lock = f
	data, err := os.ReadFile(j.path(".nodes"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, j.finish() // finished between the look and the lock
	}
	if err == nil {
		err = json.Unmarshal(data, &j.hdr)
	}
	if err == nil && (j.hdr.Version != journalVersion || j.hdr.ID != id || j.hdr.Checkpoint == nil) {
		err = fmt.Errorf("version %d (this Warden reads %d), id %q or its checkpoint does not match", j.hdr.Version, journalVersion, j.hdr.ID)
	}
	if err != nil {
		j.release(false)
		return nil, fmt.Errorf("interrupted undo %s: %w; check its links and empty directories and remove it by hand", id, err)
	}
	if len(roots) > 0 && !related(j.hdr.Root, roots) {
		j.release(false)
		return nil, nil
	}
	r, err := settleNodes(j)
	if err != nil {
		j.release(false)
		return nil, fmt.Errorf("interrupted undo in %s (%s): %w; Warden tries again at its next start", j.hdr.Root, j.hdr.Summary, err)
	}
	return r, j.finish()
}

// settleNodes finishes or rolls back the node steps journal j names, as its
// checkpoint's record says the undo was committed or not.
func settleNodes(j *journal) (*Recovered, error) {
	ref := j.hdr.Checkpoint
	cps := NewCheckpoints(ref.Dir)
	cp, err := cps.load(filepath.Join(cps.rootDir(ref.Root), ref.ID+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		// The record was cleared: nothing says which way to settle, nor
		// which links were in flux.
		return &Recovered{Root: j.hdr.Root, Summary: j.hdr.Summary, Undo: true, NodesGone: true}, nil
	}
	if err != nil {
		return nil, err
	}
	for i, n := range cp.Nodes {
		if err := os.Remove(nodeTmp(n, j.hdr.ID, i)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	r := &Recovered{Root: cp.Root, Summary: cp.Summary, Undo: true, Finished: cp.Undone != nil, Nodes: len(cp.Nodes)}
	if r.Finished {
		err = cp.restoreNodes(j.hdr.ID)
	} else {
		err = cp.unclearNodes(j.hdr.ID)
	}
	if err == nil {
		err = syncDirs(nodeDirs(cp.Nodes))
	}
	return r, err
}

// nodeDirs are the directories the nodes are in.
func nodeDirs(nodes []Node) map[string]bool {
	dirs := map[string]bool{}
	for _, n := range nodes {
		dirs[filepath.Dir(n.Path)] = true
	}
	return dirs
}
