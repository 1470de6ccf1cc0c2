package protect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// The scan store may only save listings: every scan must find what a full
// listing finds. Attacks change a tree between scans in the ways that keep
// a directory's mtime or name (a .git made deep down, a directory replaced
// by a renamed one, an mtime set back, a forged or truncated store); the
// twin is the unchanged tree, served without listing.
func TestScanStoreFindsWhatAListingFinds(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"a/b/c", "a/x", "d/e/f/g", "other/y"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.MkdirAll(filepath.Join(ws, "d/e/.git"), 0o755)
	time.Sleep(scanSettled + 100*time.Millisecond) // old enough to be recorded
	store := t.TempDir()
	useScanStore(store)
	defer useScanStore("")
	scan := func() []string {
		found, _ := storeScan(ws, nil, -1)
		saveScanStore()
		slices.Sort(found)
		return found
	}
	check := func(what string) {
		t.Helper()
		want := WalkRepos(ws, nil, -1)
		slices.Sort(want)
		if got := scan(); !slices.Equal(got, want) {
			t.Fatalf("%s: the stored scan found %q, a listing %q", what, got, want)
		}
	}
	check("first scan")

	// Twin: nothing changed, nothing listed; again after reloading the file.
	before := storeListings.Load()
	check("unchanged")
	scanStore.Lock()
	scanStore.loaded = false
	scanStore.Unlock()
	check("unchanged, reloaded")
	if n := storeListings.Load() - before; n != 0 {
		t.Errorf("an unchanged tree listed %d directories", n)
	}

	os.Mkdir(filepath.Join(ws, "a/b/c/.git"), 0o755)
	check("a .git made three levels down")

	old := time.Now().Add(-time.Hour)
	os.Mkdir(filepath.Join(ws, "a/x/.git"), 0o755)
	os.Chtimes(filepath.Join(ws, "a/x"), old, old)
	check("a .git made and the mtime set back")

	repl := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(filepath.Join(repl, "c", ".git"), 0o755)
	os.Rename(filepath.Join(ws, "other/y"), filepath.Join(ws, "gone"))
	os.RemoveAll(filepath.Join(ws, "a/b"))
	if err := os.Rename(repl, filepath.Join(ws, "a/b")); err != nil {
		t.Fatal(err)
	}
	check("a directory replaced by one moved in")

	for _, forged := range [][]byte{[]byte(scanStoreMagic + "\x05/x"), []byte("garbage"), {}} {
		if err := os.WriteFile(filepath.Join(store, scanStoreName), forged, 0o600); err != nil {
			t.Fatal(err)
		}
		scanStore.Lock()
		scanStore.loaded = false
		scanStore.Unlock()
		check("a truncated or forged store")
	}
}

// The store is kept only where this run's command cannot write: the state
// directory, unless a writable root holds it without protecting it.
func TestScanStoreOnlyOutsideTheCommandsReach(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := pathmemo.ResolveExisting(filepath.Join(state, "warden"))
	outside := []Root{{Path: t.TempDir()}}
	if got := scanStoreDir(outside); got != dir {
		t.Errorf("state directory outside the roots: store %q, want %q", got, dir)
	}
	holding := []Root{{Path: pathmemo.ResolveExisting(state), Protected: []string{dir}}}
	if got := scanStoreDir(holding); got != dir {
		t.Errorf("state directory protected in a root: store %q, want %q", got, dir)
	}
	exposed := []Root{{Path: pathmemo.ResolveExisting(state)}}
	if got := scanStoreDir(exposed); got != "" {
		t.Errorf("state directory writable by the command: store %q, want none", got)
	}
}

// In /tmp the walk stops three levels down, and the deepest level is only
// checked for a .git: found there as by a listing, also in a directory the
// launcher may list but not search (the command, its owner, could chmod it).
// Twin: a deeper .git stays out of reach, as before.
func TestScanStoreScratchDepth(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"a/b/.git", "a/c", "d/e/f/.git", "g/h"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, "g/h/.git"), []byte("gitdir: "+filepath.Join(ws, "d/e/f/.git")+"\n"), 0o644)
	useScanStore(t.TempDir())
	defer useScanStore("")
	check := func(what string) {
		t.Helper()
		want := WalkRepos(ws, nil, scratchDepth)
		got, _ := storeScan(ws, nil, scratchDepth)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the stored scan found %q, a listing %q", what, got, want)
		}
		if slices.Contains(got, filepath.Join(ws, "d/e/f/.git")) != slices.Contains(want, filepath.Join(ws, "d/e/f/.git")) {
			t.Fatalf("%s: depth differs", what)
		}
	}
	check("first scan")
	os.Mkdir(filepath.Join(ws, "a/c/.git"), 0o755)
	check("a .git made at the deepest level")
	if os.Getuid() != 0 { // root searches any directory
		os.Chmod(filepath.Join(ws, "a/c"), 0o644)
		defer os.Chmod(filepath.Join(ws, "a/c"), 0o755)
		check("an unsearchable directory")
	}
}
