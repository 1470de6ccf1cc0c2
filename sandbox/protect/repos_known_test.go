package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// resetKnownRepos gives a test an empty remembered set and restores the
// process's afterwards.
func resetKnownRepos(t *testing.T) {
	t.Helper()
	knownRepos.Lock()
	saved := knownRepos.m
	knownRepos.m, knownRepos.cut, knownRepos.loaded, knownRepos.path, knownRepos.full = map[string]int64{}, map[string]int64{}, map[string]bool{}, "", false
	knownRepos.Unlock()
	t.Cleanup(func() {
		knownRepos.Lock()
		knownRepos.m, knownRepos.cut, knownRepos.loaded, knownRepos.path = saved, map[string]int64{}, map[string]bool{}, ""
		knownRepos.Unlock()
	})
}

// A repository a scan found once is held by a later scan that misses it
// (cut by its bound), until its owner deletes it; it survives the process
// through the state directory. Twin: a deleted one is forgotten, in the
// process and in the file.
func TestKnownReposHeldAfterAScanMissesThem(t *testing.T) {
	resetKnownRepos(t)
	notices := 0
	old := ScanNotice
	ScanNotice = func(string) { notices++ }
	defer func() { ScanNotice = old }()
	root, state := t.TempDir(), t.TempDir()
	repo, gone := filepath.Join(root, "a/.git"), filepath.Join(root, "b/.git")
	for _, d := range []string{repo, gone} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	useKnownRepos(state)
	withKnownRepos(root, nil, []string{repo, gone}, false)
	saveKnownRepos()

	// A new process: only the file remembers.
	resetKnownRepos(t)
	useKnownRepos(state)
	got := withKnownRepos(root, nil, nil, true)
	if !slices.Contains(got, repo) || !slices.Contains(got, gone) {
		t.Fatalf("a cut scan lost remembered repositories: %q", got)
	}
	withKnownRepos(root, nil, nil, true)
	if notices != 1 {
		t.Errorf("the cut was reported %d times, want once", notices)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	got = withKnownRepos(root, nil, nil, true)
	if slices.Contains(got, gone) || !slices.Contains(got, repo) {
		t.Fatalf("after the owner deleted %s: %q", gone, got)
	}
	saveKnownRepos()
	m, cut := loadKnownRepos(filepath.Join(state, knownReposName))
	if _, ok := m[gone]; ok {
		t.Errorf("the deleted repository is still in the file: %v", m)
	}
	if _, ok := m[repo]; !ok {
		t.Errorf("the existing repository left the file: %v", m)
	}
	if _, ok := cut[root]; !ok {
		t.Errorf("the cut root is not in the file: %v", cut)
	}
	// A full scan clears the cut.
	withKnownRepos(root, nil, []string{repo}, false)
	saveKnownRepos()
	if _, cut := loadKnownRepos(filepath.Join(state, knownReposName)); len(cut) != 0 {
		t.Errorf("a full scan left the root marked cut: %v", cut)
	}
}

// When the remembered set is full, the ones remembered first stay: a flood
// of fake .git directories cannot push a real repository out. Twin: the
// new ones found by this scan are still held by this scan.
func TestKnownReposFullKeepsTheFirst(t *testing.T) {
	resetKnownRepos(t)
	old := ScanNotice
	ScanNotice = func(string) {}
	defer func() { ScanNotice = old }()
	root := t.TempDir()
	real := filepath.Join(root, "real/.git")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	withKnownRepos(root, nil, []string{real}, false)
	var fakes []string
	for i := range knownReposMax + 10 {
		fakes = append(fakes, filepath.Join(root, "f"+strconv.Itoa(i), ".git"))
	}
	got := withKnownRepos(root, nil, fakes, true)
	if len(knownRepos.m) != knownReposMax {
		t.Errorf("remembered %d, want the cap %d", len(knownRepos.m), knownReposMax)
	}
	if _, ok := knownRepos.m[real]; !ok {
		t.Fatal("the first repository was pushed out by later ones")
	}
	if !slices.Contains(got, real) || !slices.Contains(got, fakes[len(fakes)-1]) {
		t.Errorf("this scan's result lost a repository")
	}
}
