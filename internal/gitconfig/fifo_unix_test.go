//go:build unix

package gitconfig

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A repository a sandboxed command made may hold a FIFO where git keeps a
// config, an include, a hook, a commondir or a .git file: reading one
// would wait for a writer forever, and every later run with it. Attack:
// Targets and Read come back, finding nothing there. Twin: the regular
// files beside them are read.
func TestFIFOsAreNotRead(t *testing.T) {
	ws := t.TempDir()
	git := filepath.Join(ws, ".git")
	write(t, filepath.Join(git, "config"), "[include]\n\tpath = ../inc.cfg\n[core]\n\thooksPath = .githooks\n")
	for _, p := range []string{filepath.Join(ws, "inc.cfg"), filepath.Join(git, "commondir"), filepath.Join(git, "hooks", "pre-commit")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(ws, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(sub, ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 2)
	go func() {
		done <- Targets(git, nil, "")
		done <- Targets(filepath.Join(sub, ".git"), nil, "")
	}()
	for range 2 {
		select {
		case got := <-done:
			_ = got
		case <-time.After(10 * time.Second):
			t.Fatal("Targets blocked on a FIFO")
		}
	}
	if _, err := Read(filepath.Join(ws, "inc.cfg")); err == nil {
		t.Error("Read of a FIFO: no error")
	}
	// Twin: the null device reads as an empty config (GIT_CONFIG_GLOBAL=/dev/null).
	if e, err := Read(os.DevNull); err != nil || len(e) != 0 {
		t.Errorf("Read(%s) = %v, %v", os.DevNull, e, err)
	}
	got := Targets(git, nil, "")
	want := map[string]bool{filepath.Join(ws, "inc.cfg"): true, filepath.Join(ws, ".githooks"): true}
	if len(got) != len(want) || !want[got[0]] || !want[got[1]] {
		t.Errorf("twin: Targets = %q, want the include and the hooks directory", got)
	}
}
