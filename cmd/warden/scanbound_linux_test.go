package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsmonitor is what the attacks append to a nested repository's config:
// code the user's git would run on the host.
const fsmonitor = `printf "[core]\n\tfsmonitor = touch pwned\n" >> `

// configUnchanged fails the test when the repository's config (at any of
// the paths it may have been moved to) holds the attack's line.
func configUnchanged(t *testing.T, out string, paths ...string) {
	t.Helper()
	seen := false
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		seen = true
		if strings.Contains(string(data), "fsmonitor") {
			t.Errorf("%s was written in the sandbox:\n%s\n%s", p, data, out)
		}
	}
	if !seen {
		t.Fatalf("the repository's config is nowhere: %s", out)
	}
	if strings.Contains(out, "written=0") {
		t.Errorf("the write of the config succeeded in the sandbox: %s", out)
	}
}

// A command cannot move a nested repository beyond the scan's bound: run 1
// makes 25,000 directories, run 2 moves the repository below them, run 3
// writes its .git/config. The repository's directory is a mount point in
// the sandbox (mv fails) and the repository, found once, stays remembered.
// Twins in the same runs: files in the repository's work tree stay
// writable and movable, an unrelated directory moves, and the scan, whose
// bound an ordinary tree of 25,000 directories no longer reaches, is not
// cut.
func TestScanBoundMoveBelowFlood(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`set -e; mkdir -p "$WS/proj/sub" "$HOME"; git init -q "$WS"; git init -q --template= "$WS/proj"
$W sh -c 'mkdir a && cd a && seq 1 25000 | xargs mkdir && echo flooded=$?'
$W sh -c 'mv proj a/zzz-proj; echo moved=$?; echo ok > proj/file && mv proj/file proj/file2 && mv proj/sub proj/sub2 && echo twin=$?; mkdir -p x/y && mv x z && echo unrelated=$?'
$W sh -c '` + fsmonitor + `a/zzz-proj/.git/config; echo written=$?; ` + fsmonitor + `proj/.git/config; echo written=$?'
$W sh -c 'echo ok >> proj/file2 && echo twin2=$?'`)
	if !strings.Contains(out, "flooded=0") {
		t.Fatalf("the flood did not run: %s", out)
	}
	configUnchanged(t, out, filepath.Join(u.base, "ws/proj/.git/config"), filepath.Join(u.base, "ws/a/zzz-proj/.git/config"))
	if strings.Contains(out, "moved=0") {
		t.Errorf("the repository was moved in the sandbox: %s", out)
	}
	if strings.Contains(out, "stopped at its bound") {
		t.Errorf("the scan of 25,000 directories was cut: %s", out)
	}
	for _, want := range []string{"twin=0", "unrelated=0", "twin2=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q: %s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(u.base, "ws/proj/file2")); err != nil || string(b) != "ok\nok\n" {
		t.Errorf("the work tree's file: %q %v\n%s", b, err, out)
	}
	if _, err := os.Stat(filepath.Join(u.base, "ws/z/y")); err != nil {
		t.Errorf("the unrelated directory was not moved: %v", err)
	}
	doctor := u.sh(`$WARDEN doctor`)
	if strings.Contains(doctor, "last scan of "+filepath.Join(u.base, "ws")+" for nested repositories and protected names stopped at its bound") {
		t.Errorf("doctor names a root whose scan was not cut: %s", doctor)
	}
}

// A command cannot push a repository out of the scan's reach by flooding
// its parent: run 1 makes 25,000 siblings of the directory above the
// repository (so the repository is listed after the bound, whatever the
// listing order), run 2 writes its .git/config. The repository found by
// run 1's scan is remembered and held. Twin: the repository's work tree
// stays writable in run 2.
func TestScanBoundSiblingFlood(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`set -e; mkdir -p "$WS/p/q/proj" "$HOME"; git init -q "$WS"; git init -q --template= "$WS/p/q/proj"
$W sh -c 'cd p && seq 1 25000 | xargs mkdir && echo flooded=$?'
$W sh -c '` + fsmonitor + `p/q/proj/.git/config; echo written=$?; echo ok > p/q/proj/file && echo twin=$?'`)
	if !strings.Contains(out, "flooded=0") {
		t.Fatalf("the flood did not run: %s", out)
	}
	configUnchanged(t, out, filepath.Join(u.base, "ws/p/q/proj/.git/config"))
	if !strings.Contains(out, "twin=0") {
		t.Errorf("the repository's work tree was not writable: %s", out)
	}
}

// A repository the user deletes on the host is forgotten: the next run
// drops it from the remembered set in the state directory. Twin: one that
// still exists stays remembered.
func TestScanBoundDeletedRepositoryIsForgotten(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`set -e; mkdir -p "$WS/gone" "$WS/kept" "$HOME"; git init -q "$WS"; git init -q --template= "$WS/gone"; git init -q --template= "$WS/kept"
$W true; cp "$HOME/state/warden/known-repos" "$HOME/before"; rm -rf "$WS/gone/.git"
$W true; echo done`)
	before, err := os.ReadFile(filepath.Join(u.base, "home/before"))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	after, err := os.ReadFile(filepath.Join(u.base, "home/state/warden/known-repos"))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gone, kept := filepath.Join(u.base, "ws/gone/.git"), filepath.Join(u.base, "ws/kept/.git")
	if !strings.Contains(string(before), gone) || !strings.Contains(string(before), kept) {
		t.Fatalf("the first run did not remember the repositories: %s", before)
	}
	if strings.Contains(string(after), gone) {
		t.Errorf("a repository deleted on the host is still remembered: %s", after)
	}
	if !strings.Contains(string(after), kept) {
		t.Errorf("a repository that still exists was forgotten: %s", after)
	}
}
