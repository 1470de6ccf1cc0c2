package guard

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// hub is the process's one notification instance, shared by the runs'
// guards: closing an instance that held a watch waits for an SRCU grace
// period (10-20 ms), which a per-run instance would add to every command.
// Watches are counted per key. One no guard needs lingers for watchLinger
// before it is removed: the next run, usually seconds later, watches the
// same directories.
//
// The watches are fanotify inode marks where the kernel allows them
// (unprivileged since Linux 5.13, on filesystems with file handles): a
// directory's creations and renames into it are reported on the directory
// itself, so adding the mark costs microseconds. inotify always asks for
// its children's events too, and adding such a watch marks every cached
// entry under the directory: 10-15 ms for a /tmp that has seen many
// short-lived files. inotify is the fallback per directory.
var hub struct {
	once sync.Once
	fan  *fanWatcher // nil: fanotify unavailable
	ino  *fsnotify.Watcher
	err  error

	mu     sync.Mutex
	keys   map[watchKey]int
	via    map[watchKey]bool // true: the key's watch is inotify's
	inoN   map[string]int    // inotify watches per directory (both keys share one)
	idle   map[watchKey]time.Time
	sweep  *time.Timer
	guards map[*Guard]bool
}

// watchKey is one watch: the creations in dir (renames into it included),
// or, with attrib, its entries' attribute changes (a chmod that makes a
// placeholder usable). fanotify reports the second only with child events,
// whose mark walks the directory's cached entries, so it is asked for only
// where a placeholder is.
type watchKey struct {
	dir    string
	attrib bool
}

// watchLinger is how long an unneeded watch is kept; maxLingering bounds
// how many are. Watches linger only in a process that keeps spare helpers
// (KeepSpareHelpers): a one-shot process removes them, since closing an
// instance that still holds a watch at exit waits for an SRCU grace period,
// which would cost it more than it saves.
var (
	watchLinger  = 60 * time.Second
	maxLingering = 64
	lingerOn     atomic.Bool
	// noFanotifyForTest makes every new watch inotify's.
	noFanotifyForTest bool
)

// LingerWatches turns Lingering on or off; off removes the Lingering ones.
func LingerWatches(on bool) {
	lingerOn.Store(on)
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if !on {
		for k := range hub.idle {
			delete(hub.idle, k)
			hubRemove(k)
		}
	}
}

func startHub() error {
	hub.once.Do(func() {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		hub.keys, hub.via, hub.inoN = map[watchKey]int{}, map[watchKey]bool{}, map[string]int{}
		hub.idle, hub.guards = map[watchKey]time.Time{}, map[*Guard]bool{}
		if f, err := newFanWatcher(); err == nil {
			hub.fan = f
			go fanLoop(f)
			return
		}
		hub.err = startInotify()
	})
	return hub.err
}

// startInotify starts the fallback instance. Called with hub.mu.
func startInotify() error {
	if hub.ino != nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	hub.ino = w
	go inotifyLoop(w)
	return nil
}

// inotifyLoop hands each event to the guards.
func inotifyLoop(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			// A rename into the directory is a Create too; Chmod may make
			// a stale placeholder usable.
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Chmod) {
				hubEvent(ev.Name)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				hubEvent("/")
			}
		}
	}
}

// hubEvent hands name to every guard ("/" after lost events: all names).
func hubEvent(name string) {
	hub.mu.Lock()
	gs := make([]*Guard, 0, len(hub.guards))
	for g := range hub.guards {
		gs = append(gs, g)
	}
	hub.mu.Unlock()
	for _, g := range gs {
		g.event(name)
	}
}

// hubWatch adds a counted watch. The first guard to need it adds it even
// when it lingers: the kernel resolves dir again, so a directory replaced
// since is watched, not the old one.
func hubWatch(k watchKey) error {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.keys[k] == 0 {
		if err := hubAdd(k); err != nil {
			return err
		}
		delete(hub.idle, k)
	}
	hub.keys[k]++
	return nil
}

// hubAdd adds k's watch: fanotify's mark, else inotify's watch (which
// reports creations and attribute changes alike). Called with hub.mu.
func hubAdd(k watchKey) error {
	if hub.fan != nil && !noFanotifyForTest {
		err := hub.fan.add(k)
		if err == nil {
			if hub.via[k] {
				// Watched by inotify before (a Lingering key): now by fanotify.
				delete(hub.via, k)
				inotifyRelease(k.dir)
			}
			return nil
		}
		// A filesystem without file handles, or the per-user limit of
		// marks: inotify then.
	}
	if hub.via[k] {
		return hub.ino.Add(k.dir) // resolved again: see hubWatch
	}
	if err := startInotify(); err != nil {
		return err
	}
	if hub.inoN[k.dir] == 0 || !k.attrib {
		if err := hub.ino.Add(k.dir); err != nil {
			return err
		}
	}
	hub.inoN[k.dir]++
	hub.via[k] = true
	return nil
}

// hubRemove removes k's watch ("gone already" is fine). Called with hub.mu.
func hubRemove(k watchKey) {
	if hub.via[k] {
		delete(hub.via, k)
		inotifyRelease(k.dir)
		return
	}
	if hub.fan != nil {
		hub.fan.remove(k)
	}
}

// inotifyRelease drops one key's share of dir's inotify watch. Called with
// hub.mu.
func inotifyRelease(dir string) {
	if hub.inoN[dir]--; hub.inoN[dir] <= 0 {
		delete(hub.inoN, dir)
		hub.ino.Remove(dir)
	}
}

// hubRelease ends g's registration and its share of the watches; those no
// guard needs linger.
func hubRelease(g *Guard, keys map[watchKey]bool) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	delete(hub.guards, g)
	now := time.Now()
	for k := range keys {
		if hub.keys[k]--; hub.keys[k] <= 0 {
			delete(hub.keys, k)
			if lingerOn.Load() {
				hub.idle[k] = now
			} else {
				hubRemove(k)
			}
		}
	}
	hubSweep(now)
}

// hubSweep removes the Lingering watches older than watchLinger, and the
// oldest beyond maxLingering. Called with hub.mu.
func hubSweep(now time.Time) {
	for k, since := range hub.idle {
		if now.Sub(since) >= watchLinger {
			delete(hub.idle, k)
			hubRemove(k)
		}
	}
	if len(hub.idle) > 0 && hub.sweep == nil {
		hub.sweep = time.AfterFunc(watchLinger, func() {
			hub.mu.Lock()
			defer hub.mu.Unlock()
			hub.sweep = nil
			hubSweep(time.Now())
		})
	}
	for len(hub.idle) > maxLingering {
		var oldest watchKey
		first := true
		for k, since := range hub.idle {
			if first || since.Before(hub.idle[oldest]) {
				oldest, first = k, false
			}
		}
		delete(hub.idle, oldest)
		hubRemove(oldest)
	}
}

// Lingering says whether dir has a watch no guard needs, kept for the
// next run (LingerWatches).
func Lingering(dir string) bool {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	_, ok := hub.idle[watchKey{dir: filepath.Clean(dir)}]
	return ok
}

// Watching says whether a live guard watches dir now.
func Watching(dir string) bool {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	for g := range hub.guards {
		g.mu.Lock()
		w := g.live && g.watched[watchKey{dir: dir}]
		g.mu.Unlock()
		if w {
			return true
		}
	}
	return false
}

// HoldGroup returns the fanotify group for a helper to inherit and keep
// until this process is gone, or nil. Closing a group that has had marks
// waits for the kernel to free them after an SRCU grace period: a one-shot
// process that removes its marks at the end of the run and exits a moment
// later waits for that in exit (16 ms in a third of the runs measured
// here). With a helper holding the group too, this process's exit only
// drops a reference, and the helper, which nobody waits for, frees it.
// Only a process that does not keep its watches (no KeepSpareHelpers) needs
// this: a long-lived one keeps its group open. The inotify fallback's
// descriptor is not reachable through fsnotify, so it is not handed over.
func HoldGroup() *os.File {
	if lingerOn.Load() || startHub() != nil {
		return nil
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.fan == nil {
		return nil
	}
	return hub.fan.file
}
