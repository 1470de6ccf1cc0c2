package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// journalPatch updates f0..f(n-1), adds new/dir/added.txt and deletes gone.txt.
func journalPatch(t *testing.T, root string, n int) *Plan {
	t.Helper()
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	files := map[string]string{"gone.txt": "gone\n"}
	for i := range n {
		files[fmt.Sprintf("f%d.txt", i)] = "old\n"
		fmt.Fprintf(&b, "*** Update File: f%d.txt\n@@\n-old\n+new\n", i)
	}
	b.WriteString("*** Add File: new/dir/added.txt\n+added\n*** Delete File: gone.txt\n*** End Patch")
	writeFiles(t, root, files)
	return prepare(t, root, b.String())
}

// treeState says whether root holds the patch's old files, its new ones, or
// a mix, and lists any file Warden left behind in the tree.
func treeState(t *testing.T, root string, n int) (state string, debris []string) {
	t.Helper()
	old, new := 0, 0
	for i := range n {
		switch data, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i))); string(data) {
		case "old\n":
			old++
		case "new\n":
			new++
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "new/dir/added.txt")); err == nil && string(data) == "added\n" {
		new++
	} else if _, err := os.Stat(filepath.Join(root, "new")); os.IsNotExist(err) {
		old++
	}
	if _, err := os.Stat(filepath.Join(root, "gone.txt")); err == nil {
		old++
	} else {
		new++
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".warden-") {
			debris = append(debris, p)
		}
		return nil
	})
	switch {
	case old == n+2:
		return "old", debris
	case new == n+2:
		return "new", debris
	}
	return fmt.Sprintf("mixed (%d old, %d new)", old, new), debris
}

// interrupt runs Disk.Apply's steps up to stop, as a killed Warden would
// have left them: stop is "intent", "staged", or a number of renames done
// after the commit record.
func interrupt(t *testing.T, d Disk, plan *Plan, stop string) {
	t.Helper()
	var writes []diskWrite
	var removals []diskRemoval
	var prune []string
	for _, f := range plan.Files {
		prune = append(prune, f.PruneDirs...)
		if f.Deleted() {
			removals = append(removals, diskRemoval{path: f.Path, before: f.Before, mode: 0o644})
		} else {
			writes = append(writes, diskWrite{target: f.Path, content: f.After, mode: 0o644, existed: f.Existed, before: f.Before})
		}
	}
	j, err := d.begin(plan, writes, removals, prune)
	if err != nil {
		t.Fatal(err)
	}
	defer j.lock.Close() // the process dies: its lock goes
	if stop == "intent" {
		return
	}
	if err := stageAll(context.Background(), j, writes); err != nil {
		t.Fatal(err)
	}
	if stop == "staged" {
		return
	}
	if err := j.commit(); err != nil {
		t.Fatal(err)
	}
	var renames int
	fmt.Sscan(stop, &renames)
	for i := range renames {
		if err := rename(j.entries[i].Tmp, writes[i].target); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecoverRollsBackOrFinishesByTheCommitRecord(t *testing.T) {
	for stop, want := range map[string]string{"intent": "old", "staged": "old", "0": "new", "3": "new", "6": "new"} {
		t.Run(stop, func(t *testing.T) {
			root, d := t.TempDir(), Disk{Journal: t.TempDir()}
			plan := journalPatch(t, root, 5)
			interrupt(t, d, plan, stop)
			got, err := Recover(d.Journal, root)
			if err != nil || len(got) != 1 || got[0].Finished != (want == "new") || got[0].Files != 7 {
				t.Fatalf("Recover = %+v, %v; want one change, finished %v, 7 files", got, err, want == "new")
			}
			if state, debris := treeState(t, root, 5); state != want || len(debris) > 0 {
				t.Errorf("after recovery the tree is %s, want %s; left behind: %v", state, want, debris)
			}
			if left, _ := os.ReadDir(d.Journal); len(left) > 0 {
				t.Errorf("journal files left: %v", left)
			}
			if again, err := Recover(d.Journal, root); len(again) > 0 || err != nil {
				t.Errorf("second recovery = %+v, %v; want nothing", again, err)
			}
		})
	}
}

// A change in progress holds its journal's lock: recovery leaves it alone,
// and the change completes.
func TestRecoverLeavesARunningChange(t *testing.T) {
	root, d := t.TempDir(), Disk{Journal: t.TempDir()}
	plan := journalPatch(t, root, 3)
	renameFile = func(from, to string) error {
		if got, err := Recover(d.Journal, root); len(got) > 0 || err != nil {
			t.Errorf("Recover during the commit = %+v, %v; want nothing", got, err)
		}
		return rename(from, to)
	}
	defer func() { renameFile = rename }()
	if _, err := d.Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if state, debris := treeState(t, root, 3); state != "new" || len(debris) > 0 {
		t.Errorf("tree %s, debris %v", state, debris)
	}
	if left, _ := os.ReadDir(d.Journal); len(left) > 0 {
		t.Errorf("journal files left: %v", left)
	}
}

// Recovery for one workspace leaves the interrupted changes of another.
func TestRecoverOnlyTheWorkspacesChanges(t *testing.T) {
	root, other, d := t.TempDir(), t.TempDir(), Disk{Journal: t.TempDir()}
	interrupt(t, d, journalPatch(t, root, 2), "1")
	if got, err := Recover(d.Journal, other); len(got) > 0 || err != nil {
		t.Fatalf("Recover(other) = %+v, %v", got, err)
	}
	if got, err := Recover(d.Journal, filepath.Join(root, "sub")); len(got) != 1 || err != nil {
		t.Fatalf("Recover(inside root) = %+v, %v; want the change", got, err)
	}
}

// A file someone else changed after the kill is neither old nor new:
// rolling back leaves it and says so.
func TestRollBackLeavesAFileChangedSince(t *testing.T) {
	root, d := t.TempDir(), Disk{Journal: t.TempDir()}
	plan := journalPatch(t, root, 2)
	interrupt(t, d, plan, "staged")
	os.WriteFile(filepath.Join(root, "f1.txt"), []byte("theirs\n"), 0o644)
	got, err := Recover(d.Journal, root)
	if err != nil || len(got) != 1 || len(got[0].Kept) != 1 || !strings.HasSuffix(got[0].Kept[0], "f1.txt") {
		t.Fatalf("Recover = %+v, %v; want f1.txt kept", got, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "f1.txt")); string(data) != "theirs\n" {
		t.Errorf("f1.txt = %q, want the other edit kept", data)
	}
	if !strings.Contains(got[0].String(), "left alone because they changed since") {
		t.Errorf("message %q does not name the file left alone", got[0].String())
	}
}

// An interrupted patch's undo record follows its files: dropped when the
// patch is rolled back, fingerprinted when it is finished (so undo works).
// An interrupted undo finished marks the record undone.
func TestRecoverSettlesTheUndoRecord(t *testing.T) {
	for _, stop := range []string{"staged", "2"} {
		t.Run(stop, func(t *testing.T) {
			root, d := t.TempDir(), Disk{Journal: t.TempDir()}
			cps := NewCheckpoints(t.TempDir())
			plan := journalPatch(t, root, 2)
			cp, err := cps.record(plan)
			if err != nil {
				t.Fatal(err)
			}
			plan.checkpoint = &checkpointLink{cps: cps, cp: cp}
			interrupt(t, d, plan, stop)
			if _, err := Recover(d.Journal, root); err != nil {
				t.Fatal(err)
			}
			last, err := cps.Last(root)
			if stop == "staged" {
				if last != nil || err != nil {
					t.Fatalf("rolled back: Last = %+v, %v; want no record", last, err)
				}
				return
			}
			if last == nil || err != nil {
				t.Fatalf("finished: Last = %v, %v; want the record", last, err)
			}
			// Undo, killed after its commit record, then recovered.
			undo, err := last.revertPlan(Disk{}, false)
			if err != nil {
				t.Fatal(err)
			}
			undo.checkpoint = &checkpointLink{cps: cps, cp: last, undo: true}
			interrupt(t, d, undo, "1")
			got, err := Recover(d.Journal, root)
			if err != nil || len(got) != 1 || !got[0].Undo || !got[0].Finished {
				t.Fatalf("Recover(undo) = %+v, %v", got, err)
			}
			if state, debris := treeState(t, root, 2); state != "old" || len(debris) > 0 {
				t.Errorf("after the undo the tree is %s, debris %v", state, debris)
			}
			if _, err := cps.Undo(context.Background(), Disk{Journal: d.Journal}, root, false); !strings.Contains(fmt.Sprint(err), "already undone") {
				t.Errorf("a second undo says %v, want already undone", err)
			}
		})
	}
}

// Apply journals the undo record with the files: once Disk.Apply returns,
// the record is settled, whatever happens to the process next.
func TestApplySettlesTheRecordBeforeForgettingTheJournal(t *testing.T) {
	root, d := t.TempDir(), Disk{Journal: t.TempDir()}
	cps := NewCheckpoints(t.TempDir())
	plan := journalPatch(t, root, 2)
	if _, err := Apply(context.Background(), d, plan, cps); err != nil {
		t.Fatal(err)
	}
	if _, err := cps.Undo(context.Background(), d, root, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if state, debris := treeState(t, root, 2); state != "old" || len(debris) > 0 {
		t.Errorf("after undo the tree is %s, debris %v", state, debris)
	}
	if left, _ := os.ReadDir(d.Journal); len(left) > 0 {
		t.Errorf("journal files left: %v", left)
	}
}
