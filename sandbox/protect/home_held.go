package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/homeentry"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A home directory inside a writable root (the workspace opened at ~, or
// writable_roots = ["~"]) holds what the host runs without asking: a .pth
// file in ~/.local/lib/python3.X/site-packages runs in every python, a
// terminal's, editor's or REPL's start-up file at its next start. No list
// of names keeps up with the tools, so there the sandbox denies by default:
// every entry at the top of the home directory whose name starts with "."
// is read-only unless Policy.HomeWritable allows it, and a dot-entry the
// command creates there is moved away (sandbox/quarantine.go). Apart from
// home, every directory on the user's PATH that lies inside a writable root
// is read-only: a program planted there (./bin/git, ~/bin/code) runs the
// next time the host calls it.

// HomeTop is how a root that is or holds the home directory keeps its top.
type HomeTop struct {
	// Dir is the home directory, links resolved.
	Dir string
	// Allowed are the names at its top that stay writable (HomeWritable's
	// entries of one part).
	Allowed []string
}

// Allows says whether the dot-entry name may be created or changed.
func (h *HomeTop) Allows(name string) bool { return slices.Contains(h.Allowed, name) }

// HomeHeld lists what a worked root rp holding the home directory keeps
// read-only at the home's top: each dot-entry (directories and files: a
// mount holds them), the targets of the links among them that lie in rp
// (~/.vimrc -> ~/dotfiles/vimrc) unless they hold a worked root, and the
// links themselves and other entries no mount holds (watched: one the
// command replaces is moved away). nil when rp does not hold home.
func HomeHeld(homeWritable []string, rp, home string, worked []string, m *pathmemo.Memo) (held, watch []string, top *HomeTop) {
	if home == "" || !pathutil.Within(rp, home) {
		return nil, nil, nil
	}
	top = &HomeTop{Dir: home}
	for _, e := range homeWritable {
		if c, err := homeentry.Clean(e); err == nil && !strings.ContainsRune(c, filepath.Separator) {
			top.Allowed = append(top.Allowed, c)
		}
	}
	entries, _ := ReadDirNames(home)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, ".") {
			continue
		}
		if top.Allows(e.Name) {
			continue
		}
		path := filepath.Join(home, e.Name)
		if e.Dir || e.Regular {
			held = append(held, path)
			continue
		}
		watch = append(watch, path)
		if target := m.ResolveExisting(path); target != path && pathutil.Within(rp, target) && !holdsAny(target, worked) {
			held = append(held, target)
		}
	}
	return held, watch, top
}

// InnermostHolding is the deepest of roots (sorted) that is or holds home,
// or "": the one root whose Protected lists the home's dot-entries (a
// mount in the innermost covers every outer root's view too).
func InnermostHolding(roots []string, home string) string {
	out := ""
	for _, r := range roots {
		if home != "" && pathutil.Within(r, home) {
			out = r
		}
	}
	return out
}

// PathHeld lists the directories on the user's PATH that lie inside rp:
// held read-only (resolved), the link as written watched when the entry
// is one. A PATH directory that is a worked root or holds one is left
// out: the user asked the agent to work there. Relative entries ("." or
// "bin") name a different directory for every caller and are skipped.
func PathHeld(rp string, worked []string, m *pathmemo.Memo) (held, watch []string) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		real := m.ResolveExisting(d)
		if real == rp || !pathutil.Within(rp, real) || holdsAny(real, worked) {
			continue
		}
		held = append(held, real)
		if real != d && pathutil.Within(rp, d) {
			if st, err := m.Lstat(d); err == nil && st.Mode()&os.ModeSymlink != 0 {
				watch = append(watch, d)
			}
		}
	}
	return held, watch
}

// holdsAny says whether dir is one of paths or holds one.
func holdsAny(dir string, paths []string) bool {
	return slices.ContainsFunc(paths, func(p string) bool { return pathutil.Within(dir, p) })
}
