//go:build !linux

package changes

import "errors"

// Other systems walk the roots again after each run.
type watcher struct{}

func newWatcher(string) (*watcher, error) { return nil, errors.New("no inotify") }

func (*watcher) mark(string) {}

type changed struct {
	paths map[string]bool
	dirs  map[string]bool
}

func (*watcher) drain() (changed, bool) { return changed{}, false }

func (*watcher) close() {}
