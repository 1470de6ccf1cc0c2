package protect

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A scan PrepareRun made ahead is what the run that follows at once uses
// (twin); one older than scanAheadFresh when the run starts (after a
// prompt) is made again, so a repository cloned meanwhile is found.
func TestScanAheadRedoneWhenTheRunStartsLate(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	roots := []Root{{Path: ws}}
	_, _, wait := ScanRoots(roots, true, nil)
	wait()
	if err := os.Mkdir(filepath.Join(ws, "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, _, wait := ScanRoots(roots, false, nil)
	wait()
	if len(res[0]) != 0 {
		t.Fatalf("the run at once did not take the scan made ahead: %q", res[0])
	}
	scanCache.Lock()
	for _, r := range scanCache.m {
		if r.ahead {
			r.at = r.at.Add(-scanAheadFresh)
		}
	}
	scanCache.Unlock()
	res, _, wait = ScanRoots(roots, false, nil)
	wait()
	if !slices.Contains(res[0], filepath.Join(ws, "a", ".git")) {
		t.Fatalf("a late run used the old scan made ahead: %q", res[0])
	}
}

// A scan made ahead that began before a prompt and ended after it (a slow
// filesystem) does not serve the late run either: its age counts from its
// start, and the run that waited for it checks that age once it is done.
// The twin, a scan begun just now and still under way, is waited for and
// used.
func TestScanAheadStillRunningWhenTheRunStartsLate(t *testing.T) {
	for _, late := range []bool{true, false} {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws, "a", ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		roots := []Root{{Path: ws}}
		key := fmt.Sprintf("%s\x00%d\x00%s", ws, -1, "")
		began := time.Now()
		if late {
			began = began.Add(-2 * scanAheadFresh)
		}
		// The scan made ahead, still under way; it saw no repository.
		r := &scanResult{ready: make(chan struct{}), ahead: true, at: began}
		scanCache.Lock()
		scanCache.m[key] = r
		scanCache.Unlock()
		done := make(chan []string)
		go func() {
			res, _, wait := ScanRoots(roots, false, nil)
			wait()
			done <- res[0]
		}()
		time.Sleep(50 * time.Millisecond)
		close(r.ready)
		got := <-done
		if found := slices.Contains(got, filepath.Join(ws, "a", ".git")); found != late {
			t.Errorf("begun late %v: the run found %q", late, got)
		}
	}
}
