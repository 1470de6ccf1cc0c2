package guard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wardenhq/warden/sandbox/protect"
)

// homeWatch is what a guard watches besides the missing protected paths:
// the home directory's top, where a dot-entry the command creates is moved
// away, and the existing entries no mount holds (links), which the command
// may not replace (see protect/home_held.go).
type homeWatch struct {
	tops  []homeSeen
	links []linkSeen
}

// homeSeen is one home directory's top as the run found it.
type homeSeen struct {
	root     string // the writable root holding it
	top      *protect.HomeTop
	existing map[string]bool // its dot-entries before the command started
}

// linkSeen is one watched entry and what it was before the command started.
type linkSeen struct {
	root, path string
	was        entryID
}

// entryID tells an entry from one made in its place: a link by its target
// (an inode number is reused at once; the same link made anew is harmless),
// anything else by its inode.
type entryID struct {
	exists bool
	mode   os.FileMode // the type bits
	target string      // a link's
	dev    uint64
	ino    uint64
}

func entryIDOf(p string) entryID {
	st, err := os.Lstat(p)
	if err != nil {
		return entryID{}
	}
	id := entryID{exists: true, mode: st.Mode().Type()}
	if id.mode&os.ModeSymlink != 0 {
		id.target, _ = os.Readlink(p)
		return id
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(sys.Dev), sys.Ino
	}
	return id
}

// newHomeWatch looks at the roots' home tops and watched entries before the
// command starts (after the guard made its quarantine directory, which may
// be a new ~/.local).
func newHomeWatch(roots []protect.Root) homeWatch {
	var w homeWatch
	seen := map[string]bool{}
	for _, r := range roots {
		if r.Home != nil && !seen[r.Home.Dir] {
			seen[r.Home.Dir] = true
			h := homeSeen{root: r.Path, top: r.Home, existing: map[string]bool{}}
			entries, _ := protect.ReadDirNames(r.Home.Dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name, ".") {
					h.existing[e.Name] = true
				}
			}
			w.tops = append(w.tops, h)
		}
		for _, p := range r.Watched {
			w.links = append(w.links, linkSeen{root: r.Path, path: p, was: entryIDOf(p)})
		}
	}
	return w
}

func (w homeWatch) empty() bool { return len(w.tops) == 0 && len(w.links) == 0 }

// dirs are the directories whose creations the guard must hear of.
func (w homeWatch) dirs() []string {
	var out []string
	for _, h := range w.tops {
		out = append(out, h.top.Dir)
	}
	for _, l := range w.links {
		out = append(out, filepath.Dir(l.path))
	}
	return out
}

// watchHome adds the watches newHomeWatch's directories need. Called with
// g.mu, the guard registered with the hub.
func (g *Guard) watchHome() {
	for _, dir := range g.home.dirs() {
		k := watchKey{dir: dir}
		if g.watched[k] {
			continue
		}
		if err := hubWatch(k); err != nil {
			if g.gap == "" {
				g.gap = "dot-entries the command creates at the top of the home directory are moved away only after it ends: watching " + dir + " failed (" + err.Error() + ")"
			}
			continue
		}
		g.watched[k] = true
	}
}

// homeEvent moves away name ("/": every name) when it is a dot-entry the
// command created at a home's top, or replaced a watched entry with.
// Called with g.mu.
func (g *Guard) homeEvent(name string) {
	for _, h := range g.home.tops {
		if name == "/" {
			g.homeSweep(h)
			continue
		}
		if filepath.Dir(name) == h.top.Dir {
			g.homeCheck(h, filepath.Base(name))
		}
	}
	for _, l := range g.home.links {
		if name == "/" || name == l.path {
			g.linkCheck(l)
		}
	}
}

// homeFinish looks at every home top and watched entry once the command is
// gone. Called with g.mu.
func (g *Guard) homeFinish() { g.homeEvent("/") }

// homeSweep checks every dot-entry at h's top.
func (g *Guard) homeSweep(h homeSeen) {
	entries, _ := protect.ReadDirNames(h.top.Dir)
	for _, e := range entries {
		g.homeCheck(h, e.Name)
	}
}

// homeCheck moves away the entry name at h's top when it is a dot-entry
// that was not there before the command started and is not allowed.
func (g *Guard) homeCheck(h homeSeen, name string) {
	if !strings.HasPrefix(name, ".") || name == "." || name == ".." || h.existing[name] || h.top.Allows(name) {
		return
	}
	p := filepath.Join(h.top.Dir, name)
	if _, err := os.Lstat(p); err != nil {
		return
	}
	g.quarantine(h.root, p)
}

// linkCheck moves away what stands at a watched entry's name when it is no
// longer the entry that was there.
func (g *Guard) linkCheck(l linkSeen) {
	if now := entryIDOf(l.path); !now.exists || now == l.was {
		return
	}
	g.quarantine(l.root, l.path)
}
