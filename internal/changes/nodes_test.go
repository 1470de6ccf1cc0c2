//go:build unix

package changes

import (
	"os"
	"path/filepath"
	"testing"
)

// Links and empty directories are entries of their own, seen alike by the
// watched look and by a walk: a link's target is its content (a retarget
// is a change, a touch is not), an empty directory is recorded with its
// mode, and a directory that was filled or emptied is no change of its own.
func TestRecorderLinksAndEmptyDirectories(t *testing.T) {
	for _, watched := range []bool{true, false} {
		root := t.TempDir()
		write(t, root, "a.txt", "a\n", 0o644)
		write(t, root, "full/x.txt", "x\n", 0o644)
		write(t, root, "to-empty/y.txt", "y\n", 0o644)
		for _, l := range [][2]string{{"gone", "a.txt"}, {"moved", "a.txt"}, {"same", "/nowhere"}, {"was-link", "a.txt"}} {
			os.Symlink(l[1], filepath.Join(root, l[0]))
		}
		for _, d := range []string{"empty", "to-fill", "nested/deep"} {
			os.MkdirAll(filepath.Join(root, d), 0o700)
		}
		rec := &Recorder{Store: OpenStore(t.TempDir())}
		run := rec.Begin([]string{root})
		if s := run.roots[0]; !watched && s.watch != nil {
			s.watch.close()
			s.watch = nil
		}
		os.Remove(filepath.Join(root, "gone"))
		os.Remove(filepath.Join(root, "moved"))
		os.Symlink("full/x.txt", filepath.Join(root, "moved"))
		os.Remove(filepath.Join(root, "a.txt"))
		os.Symlink("/elsewhere", filepath.Join(root, "a.txt"))
		os.Remove(filepath.Join(root, "was-link"))
		write(t, root, "was-link", "a file now\n", 0o644)
		os.Remove(filepath.Join(root, "empty"))
		os.Remove(filepath.Join(root, "to-empty/y.txt"))
		write(t, root, "to-fill/z.txt", "z\n", 0o644)
		os.RemoveAll(filepath.Join(root, "nested"))
		os.MkdirAll(filepath.Join(root, "made/a/b"), 0o755)
		ch := run.Finish()[0]
		want := "deleted 4 files (empty/, gone, nested/deep/, …); modified a.txt, moved, was-link; created made/a/b/, to-fill/z.txt"
		if got := ch.String(); got != want {
			t.Errorf("watched %v:\n got %q\nwant %q", watched, got, want)
		}
		for _, f := range ch.Files {
			switch f.Rel {
			case "to-empty":
				t.Errorf("watched %v: to-empty/ was emptied, not made: %+v", watched, f)
			case "gone", "moved":
				if f.Before.Link != "a.txt" || f.Before.Lost != "" {
					t.Errorf("watched %v: %s comes back as %+v", watched, f.Rel, f.Before)
				}
			case "empty":
				if !f.Before.Mode.IsDir() || f.Before.Mode.Perm() != 0o700 {
					t.Errorf("watched %v: empty/ comes back as %v", watched, f.Before.Mode)
				}
			case "made/a/b":
				if len(f.Dirs) != 2 || f.Dirs[0] != "made/a" || f.Dirs[1] != "made" {
					t.Errorf("watched %v: made/a/b/ was made in %v", watched, f.Dirs)
				}
			case "to-fill/z.txt":
				if len(f.Dirs) != 0 {
					t.Errorf("watched %v: to-fill/ was there before: %v", watched, f.Dirs)
				}
			}
		}
	}
}

// A kept root (the server) knows a directory a run emptied as an empty
// directory: the next run's rmdir of it is recorded, with its mode.
func TestRecorderKeptKnowsADirectoryARunEmptied(t *testing.T) {
	root := t.TempDir()
	write(t, root, "d/only.txt", "only\n", 0o644)
	os.Chmod(filepath.Join(root, "d"), 0o711)
	rec := &Recorder{Store: OpenStore(t.TempDir()), Keep: true}
	run := rec.Begin([]string{root})
	os.Remove(filepath.Join(root, "d/only.txt"))
	if got := run.Finish()[0].String(); got != "deleted d/only.txt" {
		t.Fatalf("run 1: %q", got)
	}
	run = rec.Begin([]string{root})
	os.Remove(filepath.Join(root, "d"))
	ch := run.Finish()[0]
	if got := ch.String(); got != "deleted d/" || ch.Files[0].Before.Mode != os.ModeDir|0o711 {
		t.Fatalf("run 2: %q %+v", got, ch.Files)
	}
}
