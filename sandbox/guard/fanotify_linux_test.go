package guard

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fanotify names the entry an event is about by its directory's file
// handle: the watcher must map that back to the path it marked (else every
// event makes every guard look at every name), and a directory it never
// marked must not be taken for a marked one.
func TestFanotifyNamesTheEntry(t *testing.T) {
	f, err := newFanWatcher()
	if err != nil {
		t.Skipf("fanotify unavailable: %v", err)
	}
	defer f.file.Close()
	dir, other := t.TempDir(), t.TempDir()
	if err := f.add(watchKey{dir: dir}); err != nil {
		t.Fatal(err)
	}
	if err := f.add(watchKey{dir: other, attrib: true}); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, ".envrc"), nil, 0o644)
	os.WriteFile(filepath.Join(other, "x"), nil, 0o644) // attrib only: no creation event
	os.Chmod(filepath.Join(other, "x"), 0o600)
	os.Rename(filepath.Join(other, "x"), filepath.Join(dir, ".vscode"))
	want := []string{filepath.Join(dir, ".git"), filepath.Join(dir, ".envrc"), filepath.Join(other, "x"), filepath.Join(dir, ".vscode")}
	var got []string
	buf := make([]byte, 4096)
	f.file.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < len(want) {
		n, err := f.file.Read(buf)
		if err != nil {
			t.Fatalf("read: %v (got %v)", err, got)
		}
		got = append(got, f.decode(buf[:n])...)
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("events named %q, want %q", got, want)
		}
	}
	// Removing the attrib key leaves the other's creations reported: FAN_ONDIR
	// is shared by both masks.
	if err := f.add(watchKey{dir: dir, attrib: true}); err != nil {
		t.Fatal(err)
	}
	f.remove(watchKey{dir: dir, attrib: true})
	os.Mkdir(filepath.Join(dir, ".idea"), 0o755)
	n, err := f.file.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.decode(buf[:n]); len(got) != 1 || got[0] != filepath.Join(dir, ".idea") {
		t.Fatalf("after removing the attrib key: %q", got)
	}
}
