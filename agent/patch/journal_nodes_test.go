//go:build unix

package patch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeCheckpoint records a command that removed the link keep and the
// empty directory empty (0700), retargeted latest, and made the link made
// and the empty directory built/x; root is left as the command left it.
func nodeCheckpoint(t *testing.T, cps *Checkpoints, root string) *Checkpoint {
	t.Helper()
	node := func(rel string, before, after NodeState, dirs ...string) Node {
		n := Node{Path: filepath.Join(root, rel), Rel: rel, Before: before, After: after}
		for _, d := range dirs {
			n.Dirs = append(n.Dirs, filepath.Join(root, d))
		}
		return n
	}
	cp := &Checkpoint{ID: "20260101T000000.000000000", Root: root, Created: time.Now(), Summary: "ln and mkdir", Kind: KindCommand, Nodes: []Node{
		node("keep", NodeState{Link: "a"}, NodeState{}),
		node("latest", NodeState{Link: "a"}, NodeState{Link: "b"}),
		node("made", NodeState{}, NodeState{Link: "c"}),
		node("empty", NodeState{Dir: true, Mode: 0o700}, NodeState{}),
		node("built/x", NodeState{}, NodeState{Dir: true, Mode: 0o755}, "built"),
	}}
	if err := cps.save(cp); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{os.Symlink("b", filepath.Join(root, "latest")), os.Symlink("c", filepath.Join(root, "made")), os.MkdirAll(filepath.Join(root, "built/x"), 0o755)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return cp
}

// nodesState says whether root's nodes are as before the command, as it
// left them, or a mix.
func nodesState(root string) string {
	link := func(rel string) string { target, _ := os.Readlink(filepath.Join(root, rel)); return target }
	dir := func(rel string) os.FileMode {
		if fi, err := os.Lstat(filepath.Join(root, rel)); err == nil && fi.IsDir() {
			return fi.Mode().Perm()
		}
		return 0
	}
	got := strings.Join([]string{link("keep"), link("latest"), link("made"), dir("empty").String(), dir("built/x").String(), dir("built").String()}, " ")
	switch got {
	case "a a  -rwx------ ---------- ----------":
		return "before"
	case " b c ---------- -rwxr-xr-x -rwxr-xr-x":
		return "after"
	}
	return "mixed: " + got
}

// A node-only undo killed at each of its steps is settled by the next
// Recover all before or all after the command, temporary links removed,
// and settling twice changes nothing.
func TestRecoverSettlesAnUndosLinksAndDirectories(t *testing.T) {
	steps := []struct {
		name string
		upTo int // 1 journal, 2 clear, 3 mark undone, 4 restore
		want string
	}{
		{"journaled", 1, "after"},
		{"cleared", 2, "after"},
		{"marked undone", 3, "before"},
		{"restored", 4, "before"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			cps := NewCheckpoints(t.TempDir())
			cp := nodeCheckpoint(t, cps, root)
			j, err := cps.beginNodes(dir, cp)
			if err != nil {
				t.Fatal(err)
			}
			leftover := nodeTmp(cp.Nodes[0], j.hdr.ID, 0)
			if err := os.Symlink("a", leftover); err != nil {
				t.Fatal(err)
			}
			for step, do := range []func() error{cp.clearNodes, func() error { return cps.markUndone(cp) }, func() error { return cp.restoreNodes(j.hdr.ID) }} {
				if step+2 <= s.upTo {
					if err := do(); err != nil {
						t.Fatal(err)
					}
				}
			}
			j.lock.Close() // killed: the lock is released, the journal stays
			for try := range 2 {
				done, err := Recover(dir, root)
				if err != nil {
					t.Fatal(err)
				}
				if try == 0 && (len(done) != 1 || done[0].Finished != (s.want == "before") || !strings.Contains(done[0].String(), "interrupted undo in "+root)) {
					t.Errorf("first Recover: %+v", done)
				}
				if try == 1 && len(done) != 0 {
					t.Errorf("second Recover settled again: %+v", done)
				}
				if got := nodesState(root); got != s.want {
					t.Errorf("Recover %d: nodes are %s, want %s", try+1, got, s.want)
				}
			}
			if exists(leftover) {
				t.Errorf("the temporary link %s is left", leftover)
			}
			if names, _ := os.ReadDir(dir); len(names) > 0 {
				t.Errorf("journal files left: %v", names)
			}
			// Settling the same state again (a recovery killed before it
			// forgot its journal) changes nothing.
			j.hdr.Checkpoint = &checkpointRef{Dir: cps.dir, Root: root, ID: cp.ID, Undo: true}
			if _, err := settleNodes(j); err != nil || nodesState(root) != s.want {
				t.Errorf("settling again: %v, nodes %s", err, nodesState(root))
			}
		})
	}
}

// ATTACK: a directory to put back that is now a link to a directory
// outside the workspace: recovery must not chmod through it.
func TestRecoverNeverChmodsThroughALink(t *testing.T) {
	root, dir, outside := t.TempDir(), t.TempDir(), t.TempDir()
	os.Chmod(outside, 0o755)
	cps := NewCheckpoints(t.TempDir())
	cp := nodeCheckpoint(t, cps, root)
	j, err := cps.beginNodes(dir, cp)
	if err != nil {
		t.Fatal(err)
	}
	if err := cps.markUndone(cp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "empty")); err != nil {
		t.Fatal(err)
	}
	j.lock.Close()
	if _, err := Recover(dir, root); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Recover over a link where a directory goes: %v", err)
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o755 {
		t.Errorf("recovery changed the mode of %s through a link: %v", outside, fi.Mode())
	}
}

// An undo whose links could not all be put back keeps its journal, and the
// next start finishes it: the record says undone, so the nodes follow it.
func TestUndoOfNodesThatFailsHalfWayIsFinishedAtTheNextStart(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	cps := NewCheckpoints(t.TempDir())
	nodeCheckpoint(t, cps, root)
	blocker := filepath.Join(root, "empty")
	if err := os.WriteFile(blocker, []byte("in the way\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cps.Undo(t.Context(), Disk{Journal: dir}, root, false)
	if err == nil || !strings.Contains(err.Error(), "tries again at its next start") {
		t.Fatalf("undo with a file where a directory goes back: %v", err)
	}
	if last, _ := cps.Last(root); last != nil {
		t.Errorf("the record should say undone: %+v", last)
	}
	os.Remove(blocker)
	done, err := Recover(dir, root)
	if err != nil || len(done) != 1 || !done[0].Finished {
		t.Fatalf("Recover: %+v, %v", done, err)
	}
	if got := nodesState(root); got != "before" {
		t.Errorf("after the next start the nodes are %s, want as before the command", got)
	}
}
