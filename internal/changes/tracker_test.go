package changes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tracker drives a tracked recording as the sandbox would: each change is
// reported (Touch) before it is made.
type tracker struct {
	t    *testing.T
	root string
	run  *Run
}

func startTracked(t *testing.T, root string) *tracker {
	store := OpenStore(filepath.Join(t.TempDir(), "store"))
	rec := &Recorder{Store: store}
	run := rec.BeginTracked([]string{root}, "test")
	if got := run.TrackedRoots(); len(got) != 1 {
		t.Fatalf("tracked roots %q", got)
	}
	return &tracker{t: t, root: run.TrackedRoots()[0], run: run}
}

func (k *tracker) touch(rel string, tree bool) { k.run.Touch(filepath.Join(k.root, rel), tree) }

func (k *tracker) finish() *Change {
	chs := k.run.Finish()
	if len(chs) != 1 {
		k.t.Fatalf("%d changes", len(chs))
	}
	return chs[0]
}

func kinds(ch *Change) []string {
	var out []string
	for _, f := range ch.Files {
		out = append(out, f.Kind()+" "+f.name())
	}
	return out
}

func sameList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

// A run in a large tree that writes one file costs one copy: nothing else
// is read, and the file's content before comes back.
func TestTrackedRunKeepsOnlyWhatItWasTold(t *testing.T) {
	root := t.TempDir()
	for i := range 500 {
		write(t, root, filepath.Join("d", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt"), "content", 0o644)
	}
	write(t, root, "d/target.txt", "before\n", 0o644)
	k := startTracked(t, root)
	k.touch("d/target.txt", false)
	write(t, root, "d/target.txt", "after\n", 0o644)
	ch := k.finish()
	sameList(t, "files", kinds(ch), "modified d/target.txt")
	if got := k.run.rec.Store.Copied(); got != int64(len("before\n")) {
		t.Errorf("copied %d bytes: only the written file's content before should be", got)
	}
	if data, err := k.run.rec.Store.Get(ch.Files[0].Before.Blob); err != nil || string(data) != "before\n" {
		t.Errorf("content before: %q, %v", data, err)
	}
}

// rm -rf of a tree as the sandbox reports it (each unlink, each rmdir):
// the files and the empty directory are deleted, the directories that held
// files are not entries of their own; committed files come from git.
func TestTrackedRunRemovedTree(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	write(t, root, "src/a.go", "package a\n", 0o644)
	write(t, root, "keep.txt", "keep\n", 0o644)
	git(t, root, "add", ".")
	git(t, root, "commit", "-qm", "init")
	write(t, root, "src/new.txt", "mine\n", 0o600)
	os.MkdirAll(filepath.Join(root, "src", "empty"), 0o750)
	ageIndex(t, root)
	k := startTracked(t, root)
	for _, rel := range []string{"src/a.go", "src/new.txt", "src/empty", "src"} {
		k.touch(rel, false)
	}
	if err := os.RemoveAll(filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	ch := k.finish()
	sameList(t, "files", kinds(ch), "deleted src/a.go", "deleted src/new.txt", "deleted src/empty/")
	for _, f := range ch.Files {
		switch f.Rel {
		case "src/a.go":
			if !f.Committed() {
				t.Errorf("src/a.go should come back from git: %+v", f.Before)
			}
		case "src/new.txt":
			if f.Before.Blob == "" || f.Before.Mode.Perm() != 0o600 {
				t.Errorf("src/new.txt should be in the store with its mode: %+v", f.Before)
			}
		case "src/empty":
			if f.Before.Mode.Perm() != 0o750 || !f.Before.Mode.IsDir() {
				t.Errorf("the empty directory's mode: %v", f.Before.Mode)
			}
		}
	}
}

// mv of a directory is reported as a tree: everything below it is kept,
// and the files are found moved.
func TestTrackedRunMovedDirectory(t *testing.T) {
	root := t.TempDir()
	write(t, root, "src/a.txt", "a\n", 0o644)
	write(t, root, "src/deep/b.txt", "b\n", 0o644)
	k := startTracked(t, root)
	k.touch("src", true)
	k.touch("dst", true)
	if err := os.Rename(filepath.Join(root, "src"), filepath.Join(root, "dst")); err != nil {
		t.Fatal(err)
	}
	ch := k.finish()
	sameList(t, "files", kinds(ch), "deleted src/a.txt", "deleted src/deep/b.txt", "created dst/a.txt", "created dst/deep/b.txt")
	if len(ch.Moves) != 2 {
		t.Errorf("moves: %+v", ch.Moves)
	}
	for _, f := range ch.Files {
		if f.Kind() == "created" && !slices.Contains(f.Dirs, "dst") {
			t.Errorf("%s: dst/ was made by the run, undo removes it: dirs %q", f.Rel, f.Dirs)
		}
	}
}

// Directories the run made are removed by undo; one that was there, empty
// or not, is not.
func TestTrackedRunMadeDirectories(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "build"), 0o755)
	write(t, root, "lib/old.txt", "old\n", 0o644)
	k := startTracked(t, root)
	k.touch("build/out.o", false)
	write(t, root, "build/out.o", "o", 0o644)
	k.touch("lib/gen", false)
	k.touch("lib/gen/x.go", false)
	write(t, root, "lib/gen/x.go", "x", 0o644)
	ch := k.finish()
	sameList(t, "files", kinds(ch), "created build/out.o", "created lib/gen/x.go")
	for _, f := range ch.Files {
		switch f.Rel {
		case "build/out.o":
			if len(f.Dirs) != 0 {
				t.Errorf("build/ was there before: dirs %q", f.Dirs)
			}
		case "lib/gen/x.go":
			if !slices.Equal(f.Dirs, []string{"lib/gen"}) {
				t.Errorf("only lib/gen was made: dirs %q", f.Dirs)
			}
		}
	}
}

// A directory the run made, filled and moved is all new where it ends:
// nothing below it is taken for a file that was there before.
func TestTrackedRunMovesADirectoryItMade(t *testing.T) {
	root := t.TempDir()
	k := startTracked(t, root)
	k.touch("tmp", false)
	os.Mkdir(filepath.Join(root, "tmp"), 0o755)
	k.touch("tmp/x", false)
	write(t, root, "tmp/x", "x", 0o644)
	k.touch("tmp", true)
	k.touch("out", true)
	if err := os.Rename(filepath.Join(root, "tmp"), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	ch := k.finish()
	sameList(t, "files", kinds(ch), "created out/x")
}

// Paths outside the root, the root itself and git's metadata are not
// recorded.
func TestTrackedRunIgnoresWhatItDoesNotRecord(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	k := startTracked(t, root)
	other := t.TempDir()
	k.run.Touch(filepath.Join(other, "x"), false)
	k.run.Touch(k.root+"-sibling/x", false)
	k.touch(".git/config", false)
	k.run.Touch(k.root, true)
	write(t, other, "x", "x", 0o644)
	ch := k.finish()
	if !ch.Empty() {
		t.Errorf("nothing recorded should have changed: %q", kinds(ch))
	}
}

// ATTACK: the sandbox resolved a/id_rsa while a was a directory of the
// workspace; before Warden keeps the file, another process of the command
// puts a link to a directory outside (~/.ssh) in a's place. Reading
// through it would copy a file the command may not read into the store,
// and undo would write it into the workspace for the next command to read.
// TWIN: the same file under a real directory is kept.
func TestTrackedRunNeverReadsThroughALinkSwappedIn(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, outside, "id_rsa", "PRIVATE KEY\n", 0o600)
	write(t, root, "b/id_rsa", "workspace copy\n", 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	k := startTracked(t, root)
	k.touch("a/id_rsa", false) // reported when a was a directory
	k.touch("b/id_rsa", false)
	if err := os.Remove(filepath.Join(root, "b/id_rsa")); err != nil {
		t.Fatal(err)
	}
	ch := k.finish()
	filepath.WalkDir(k.run.rec.Store.Dir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "PRIVATE KEY") {
				t.Errorf("the store holds the file outside the workspace: %s", p)
			}
		}
		return nil
	})
	sameList(t, "files", kinds(ch), "deleted b/id_rsa")
	if f := ch.Files[0]; f.Before.Blob == "" {
		t.Errorf("the twin should be kept: %+v", f.Before)
	}
}

// A run that rewrites a whole repository (a formatter) copies the first
// files it changes, then reads git's index once and takes the committed
// ones from git: the store does not grow by the repository's size. All
// are said committed.
func TestTrackedRunTakesCommittedFilesFromGitOnceItChangesMany(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	const n = copiesBeforeIndex + 36
	for i := range n {
		write(t, root, fmt.Sprintf("f%03d.go", i), fmt.Sprintf("package f // %03d\n", i), 0o644)
	}
	git(t, root, "add", ".")
	git(t, root, "commit", "-qm", "init")
	ageIndex(t, root)
	k := startTracked(t, root)
	for i := range n {
		rel := fmt.Sprintf("f%03d.go", i)
		k.touch(rel, false)
		write(t, root, rel, "package f // formatted\n", 0o644)
	}
	per := int64(len("package f // 000\n"))
	if got := k.run.rec.Store.Copied(); got != copiesBeforeIndex*per {
		t.Errorf("copied %d bytes, want the first %d files' %d", got, copiesBeforeIndex, copiesBeforeIndex*per)
	}
	ch := k.finish()
	if len(ch.Files) != n {
		t.Fatalf("%d files changed, want %d", len(ch.Files), n)
	}
	for _, f := range ch.Files {
		if !f.Committed() || (f.Before.Blob == "" && f.Before.GitObject == "") {
			t.Errorf("%s: %+v", f.Rel, f.Before)
		}
	}
	if s := ch.String(); strings.Contains(s, "not committed") {
		t.Errorf("every file was committed: %s", s)
	}
}
