package changes

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// ageIndex makes the index newer than every file, so git's racy rule does
// not exclude them (a repository the user committed to a while ago).
func ageIndex(t testing.TB, root string) {
	t.Helper()
	future := time.Now().Add(5 * time.Second)
	if err := os.Chtimes(filepath.Join(root, ".git", "index"), future, future); err != nil {
		t.Fatal(err)
	}
}

// A git workspace with committed, edited-not-committed and untracked files
// loses src/ to `rm -rf`: the change names the deletions and how many were
// not committed, and every file's content and mode can be read back.
func TestRecorderDeletedTreeComesBackFromGitAndStore(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	write(t, root, "src/a.go", "package a\n", 0o644)
	write(t, root, "src/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, root, "src/edited.go", "package edited\n", 0o644)
	write(t, root, "README.md", "readme\n", 0o644)
	git(t, root, "add", ".")
	git(t, root, "commit", "-qm", "init")
	write(t, root, "src/edited.go", "package edited // changed, not committed\n", 0o600)
	write(t, root, "src/untracked.txt", "mine\x00binary\n", 0o640)
	ageIndex(t, root)

	store := OpenStore(t.TempDir())
	rec := &Recorder{Store: store}
	run := rec.Begin([]string{root})
	if err := os.RemoveAll(filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "README.md", "readme, edited by the command\n", 0o644)
	ch := run.Finish()[0]

	got := ch.String()
	want := "deleted 4 files under src/ (2 not committed); modified README.md"
	if got != want {
		t.Fatalf("description:\n got %q\nwant %q", got, want)
	}
	wantContent := map[string]string{
		"src/a.go": "package a\n", "src/run.sh": "#!/bin/sh\necho hi\n",
		"src/edited.go": "package edited // changed, not committed\n", "src/untracked.txt": "mine\x00binary\n",
		"README.md": "readme\n",
	}
	wantMode := map[string]os.FileMode{"src/a.go": 0o644, "src/run.sh": 0o755, "src/edited.go": 0o600, "src/untracked.txt": 0o640, "README.md": 0o644}
	for _, f := range ch.Files {
		data := readBack(t, store, f.Before)
		if string(data) != wantContent[f.Rel] {
			t.Errorf("%s: read back %q, want %q", f.Rel, data, wantContent[f.Rel])
		}
		if f.Before.Mode.Perm() != wantMode[f.Rel] {
			t.Errorf("%s: mode %v, want %v", f.Rel, f.Before.Mode.Perm(), wantMode[f.Rel])
		}
		if committed := f.Rel == "src/a.go" || f.Rel == "src/run.sh" || f.Rel == "README.md"; f.Committed() != committed {
			t.Errorf("%s: committed %v, want %v (source %+v)", f.Rel, f.Committed(), committed, f.Before)
		}
	}
	if len(ch.Files) != 5 {
		t.Fatalf("files: %+v", ch.Files)
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "refs", "stash")); err == nil {
		t.Error("the recorder wrote a stash in the user's repository")
	}
}

func readBack(t testing.TB, store *Store, src Source) []byte {
	t.Helper()
	switch {
	case src.Blob != "":
		data, err := store.Get(src.Blob)
		if err != nil {
			t.Fatal(err)
		}
		return data
	case src.GitObject != "":
		objs, err := GitObjects(src.GitDir, []string{src.GitObject})
		if err != nil {
			t.Fatal(err)
		}
		return objs[src.GitObject]
	}
	t.Fatalf("no source: %+v", src)
	return nil
}

// A second snapshot copies nothing that the first copied and that did not
// change since (the stat cache), and a touched but unchanged file is not a
// change.
func TestRecorderCopiesOnlyWhatChanged(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"a", "b", "c"} {
		write(t, root, n, strings.Repeat(n, 100), 0o644)
		os.Chtimes(filepath.Join(root, n), old, old)
	}
	store := OpenStore(t.TempDir())
	rec := &Recorder{Store: store}
	if ch := rec.Begin([]string{root}).Finish()[0]; !ch.Empty() {
		t.Fatalf("nothing ran, yet: %s", ch)
	}
	_, blobs := store.Usage()
	if blobs != 3 {
		t.Fatalf("store holds %d blobs, want 3", blobs)
	}
	write(t, root, "a", strings.Repeat("A", 100), 0o644) // the user's edit since
	older := old.Add(-time.Minute)
	os.Chtimes(filepath.Join(root, "a"), older, older)
	before := store.Copied()
	run := rec.Begin([]string{root})
	if copied := store.Copied() - before; copied != 100 {
		t.Errorf("the second snapshot copied %d bytes; want only the 100 of the file edited since", copied)
	}
	now := time.Now()
	os.Chtimes(filepath.Join(root, "b"), now, now) // touched, same content
	ch := run.Finish()[0]
	if !ch.Empty() {
		t.Errorf("a touched file is not a change: %s", ch)
	}
}

// A renamed file is told as moved; a file past the copy limit is named as
// not recoverable.
func TestRecorderMovesAndLimit(t *testing.T) {
	root := t.TempDir()
	write(t, root, "old.txt", "content\n", 0o644)
	write(t, root, "big.bin", string(bytes.Repeat([]byte{1}, 2048)), 0o644)
	rec := &Recorder{Store: OpenStore(t.TempDir()), MaxFile: 1024}
	run := rec.Begin([]string{root})
	os.Rename(filepath.Join(root, "old.txt"), filepath.Join(root, "new.txt"))
	os.Remove(filepath.Join(root, "big.bin"))
	ch := run.Finish()[0]
	want := "moved old.txt → new.txt; deleted big.bin; not recoverable: big.bin (larger than the 1 KiB copy limit)"
	if got := ch.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A long-lived recorder (Keep) keeps each root watched between runs: an
// edit the user makes between two runs is not the second run's change,
// and what the second run deletes comes back as the user left it.
func TestRecorderKeptSeesEditsBetweenRuns(t *testing.T) {
	root := t.TempDir()
	write(t, root, "notes.txt", "first\n", 0o644)
	write(t, root, "src/keep.go", "package keep\n", 0o644)
	store := OpenStore(t.TempDir())
	rec := &Recorder{Store: store, Keep: true}

	run := rec.Begin([]string{root})
	write(t, root, "out/a.txt", "made by run 1\n", 0o644)
	if got := run.Finish()[0].String(); got != "created out/a.txt" {
		t.Fatalf("run 1: %q", got)
	}
	write(t, root, "notes.txt", "the user's edit between runs\n", 0o600) // in place

	run = rec.Begin([]string{root})
	os.Remove(filepath.Join(root, "notes.txt"))
	if err := os.Rename(filepath.Join(root, "src"), filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	ch := run.Finish()[0]
	if got, want := ch.String(), "moved src/keep.go → lib/keep.go; deleted notes.txt"; got != want {
		t.Fatalf("run 2:\n got %q\nwant %q", got, want)
	}
	for _, f := range ch.Files {
		if f.Rel == "notes.txt" {
			if data, _ := store.Get(f.Before.Blob); string(data) != "the user's edit between runs\n" || f.Before.Mode.Perm() != 0o600 {
				t.Errorf("notes.txt comes back as %q %v, want the user's edit, 0600", data, f.Before.Mode.Perm())
			}
		}
	}
	// A third run that changes nothing reports nothing.
	if ch := rec.Begin([]string{root}).Finish()[0]; !ch.Empty() {
		t.Errorf("run 3 changed nothing, yet: %s", ch)
	}
}

// The watched look after a run sees what a run does deep in a new
// directory, an in-place write, a mode change and a directory moved out of
// the root, as a full walk would.
func TestRecorderWatchedLookMatchesWalk(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/b/c.txt", "c\n", 0o644)
	write(t, root, "d.txt", "d\n", 0o644)
	write(t, root, "gone/x.txt", "x\n", 0o644)
	write(t, root, "gone/deeper/y.txt", "y\n", 0o644)
	outside := t.TempDir()
	rec := &Recorder{Store: OpenStore(t.TempDir())}
	run := rec.Begin([]string{root})
	f, _ := os.OpenFile(filepath.Join(root, "a/b/c.txt"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("appended\n")
	f.Close()
	os.Chmod(filepath.Join(root, "d.txt"), 0o755)
	write(t, root, "new/deep/er/e.txt", "e\n", 0o644)
	if err := os.Rename(filepath.Join(root, "gone"), filepath.Join(outside, "gone")); err != nil {
		t.Fatal(err)
	}
	got := run.Finish()[0].String()
	want := "deleted gone/deeper/y.txt, gone/x.txt; modified a/b/c.txt, d.txt; created new/deep/er/e.txt"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A primed snapshot (taken while the process prepares the run) sees what
// changed between the prime and the run: an edit then is the user's, not
// the run's, and comes back as the user left it.
func TestRecorderPrimeThenBegin(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "old\n", 0o644)
	store := OpenStore(t.TempDir())
	rec := &Recorder{Store: store}
	rec.Prime([]string{root})
	rec.take(mustResolve(t, root)) // waits for the prime, then puts it back
	rec.mu.Lock()
	primed := rec.kept
	rec.mu.Unlock()
	if len(primed) != 0 {
		t.Fatal("take should have handed the primed snapshot out")
	}
	rec.Prime([]string{root})
	write(t, root, "a.txt", "edited while the user was asked\n", 0o644)
	run := rec.Begin([]string{root})
	os.Remove(filepath.Join(root, "a.txt"))
	ch := run.Finish()[0]
	if len(ch.Files) != 1 || ch.Files[0].Kind() != "deleted" {
		t.Fatalf("change: %s", ch)
	}
	if data, _ := store.Get(ch.Files[0].Before.Blob); string(data) != "edited while the user was asked\n" {
		t.Errorf("a.txt comes back as %q", data)
	}
}

func mustResolve(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// In a repository with line-ending conversion the index's blob is not the
// file's bytes: the file is copied, and comes back as it was on disk.
func TestRecorderFilteredRepositoryCopies(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	write(t, root, ".gitattributes", "*.txt text eol=crlf\n", 0o644)
	write(t, root, "a.txt", "one\r\ntwo\r\n", 0o644)
	git(t, root, "add", ".")
	git(t, root, "commit", "-qm", "init")
	ageIndex(t, root)
	store := OpenStore(t.TempDir())
	run := (&Recorder{Store: store}).Begin([]string{root})
	os.Remove(filepath.Join(root, "a.txt"))
	ch := run.Finish()[0]
	if len(ch.Files) != 1 || ch.Files[0].Before.Blob == "" {
		t.Fatalf("a.txt should have been copied: %+v", ch.Files)
	}
	if data, _ := store.Get(ch.Files[0].Before.Blob); string(data) != "one\r\ntwo\r\n" {
		t.Errorf("a.txt comes back as %q", data)
	}
}
