package sandbox

import (
	"os"
	"sync"
	"time"

	"github.com/wardenhq/warden/sandbox/guard"
)

// early is the helper PrepareRun started, for the process's first run.
var early struct {
	sync.Mutex
	key  spareKey
	done chan struct{} // closed once h and err are set; nil: none started
	h    *helperProc
	err  error
	at   time.Time
}

func prestartHelper(pol Policy, helper string) {
	key := helperKey(pol, helper)
	early.Lock()
	defer early.Unlock()
	if early.done != nil {
		return
	}
	done := make(chan struct{})
	early.key, early.done, early.at = key, done, time.Now()
	// Only a namespaced workspace-write run watches its protected names.
	holds := key.namespaced && pol.mode() == WorkspaceWrite
	go func() {
		var group *os.File
		if holds {
			group = guard.HoldGroup()
		}
		h, err := spawnWith(key, group)
		early.Lock()
		early.h, early.err = h, err
		early.Unlock()
		close(done)
	}()
}

// takeEarly returns the helper PrepareRun started when it is of kind key
// (waiting for its start), else nil; one of another kind is ended, and so
// is one older than a spare may grow (an approval prompt answered late):
// its copy of the mount table may be stale.
func takeEarly(key spareKey) *helperProc {
	early.Lock()
	done, k, at := early.done, early.key, early.at
	early.done = nil
	early.Unlock()
	if done == nil {
		return nil
	}
	<-done
	early.Lock()
	h, err := early.h, early.err
	early.h, early.err = nil, nil
	early.Unlock()
	if err != nil || h == nil {
		return nil // started cold, which reports what is wrong
	}
	if k != key || time.Since(at) > spareIdle {
		h.kill()
		return nil
	}
	return h
}

// scansRoots says whether a run scans its roots: only a namespaced one
// mounts the repositories found read-only.
func scansRoots() bool { return namespacesUsable() }
