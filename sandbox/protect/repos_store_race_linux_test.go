package protect

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Runs of one process scan at once, and one whose roots expose the state
// directory turns the store off (useScanStore("")) while another's scan is
// listing: the listing must neither crash the process (a record written to
// the store that was let go) nor leave a record in a store file of the wrong
// place. Twin: scans that never switch find what a listing finds.
func TestScanStoreSwitchedDuringAScan(t *testing.T) {
	ws := t.TempDir()
	for i := range 200 {
		os.MkdirAll(filepath.Join(ws, "d", string(rune('a'+i%26))+string(rune('a'+i/26)), "x"), 0o755)
	}
	os.MkdirAll(filepath.Join(ws, "r", ".git"), 0o755)
	time.Sleep(scanSettled + 100*time.Millisecond)
	want := WalkRepos(ws, nil, -1)
	store := t.TempDir()
	defer useScanStore("")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			useScanStore(store)
			useScanStore("")
		}
	}()
	for range 200 {
		got, _ := storeScan(ws, nil, -1)
		saveScanStore()
		if !slices.Equal(got, want) {
			t.Fatalf("a scan while the store switched found %q, a listing %q", got, want)
		}
	}
	close(stop)
	wg.Wait()
}
