package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritableRootDevShm: a writable root on /dev/shm (which the sandbox
// covers with a fresh /dev) is the host's directory inside, writable, holds
// no device nodes, and is left with nothing but what the command wrote.
// Twin attacks: a sibling on the host's /dev/shm that is not a root stays
// out of reach, and mknod in the root is refused.
func TestWritableRootDevShm(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	root, err := os.MkdirTemp("/dev/shm", "warden-root-")
	if err != nil {
		t.Skip(err)
	}
	sibling, err := os.MkdirTemp("/dev/shm", "warden-sibling-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root); os.RemoveAll(sibling) })
	ws := t.TempDir()
	run := func(script string) (string, string, int) {
		return runWarden(t, "exec", "--yes", "--sandbox", "workspace-write", "--cwd", ws, "--writable-root", root, "--", "sh", "-c", script)
	}
	stdout, stderr, code := run(`echo hi > "` + root + `/f" && cat "` + root + `/f"`)
	if code != 0 || stdout != "hi\n" {
		t.Fatalf("write to the /dev/shm root: exit %d %q %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(root, "f")); err != nil || string(b) != "hi\n" {
		t.Errorf("the host's root does not hold the file: %q %v", b, err)
	}
	if names := dirNames(t, root); strings.Join(names, " ") != "f" {
		t.Errorf("left in the root: %v", names)
	}

	_, _, code = run(`echo x > "` + sibling + `/f"`)
	if _, err := os.Stat(filepath.Join(sibling, "f")); err == nil || code == 0 {
		t.Errorf("wrote a /dev/shm directory that is not a root: exit %d, stat %v", code, err)
	}
	_, _, code = run(`mknod "` + root + `/null" c 1 3`)
	if _, err := os.Lstat(filepath.Join(root, "null")); err == nil || code == 0 {
		t.Errorf("made a device node in the root: exit %d, lstat %v", code, err)
	}
}

// TestWritableRootMissing: a writable_roots entry in config.toml that does
// not exist is skipped with a note and the command runs, the other roots
// still writable (twin); one typed with --writable-root stays an error.
func TestWritableRootMissing(t *testing.T) {
	home := fakeHome(t)
	ws, other := t.TempDir(), t.TempDir()
	missing := filepath.Join(t.TempDir(), "not-made-yet")
	writeWardenConfig(t, home, "writable_roots = [\""+missing+"\", \""+other+"\"]\n")

	stdout, stderr, code := runWarden(t, "exec", "--yes", "--sandbox", "workspace-write", "--cwd", ws, "--", "sh", "-c", `echo ok > "`+other+`/f" && echo ran`)
	if code != 0 || stdout != "ran\n" {
		t.Fatalf("a missing configured root refused the run: exit %d %q %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "writable root "+missing+" (writable_roots in config.toml) does not exist: skipped") {
		t.Errorf("no note on the skipped root: %s", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(other, "f")); err != nil || string(b) != "ok\n" {
		t.Errorf("the existing configured root was not writable: %q %v", b, err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the skipped root was created")
	}
	if out, _, _ := runWarden(t, "doctor"); !strings.Contains(out, "  - "+missing+": does not exist, skipped\n") || !strings.Contains(out, "  - "+other+"\n") {
		t.Errorf("doctor does not list the skipped root:\n%s", out)
	}

	_, stderr, code = runWarden(t, "exec", "--yes", "--sandbox", "workspace-write", "--cwd", ws, "--writable-root", missing, "--", "true")
	if code == 0 || !strings.Contains(stderr, missing+" does not exist") {
		t.Errorf("--writable-root naming a missing directory: exit %d %s", code, stderr)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
