package gitconfig

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/shlex"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/regfile"
)

// A repository's config, or the user's, can make git obey or run files
// outside the git dir: core.hooksPath names the hooks directory (husky's
// .husky/_, a project's .githooks), and include.path and includeIf.*.path
// pull in more config (a project's shared ../.gitconfig), which may set
// core.fsmonitor or core.hooksPath in turn.

// maxDepth bounds the includes followed, as git does (10).
const maxDepth = 10

// GlobalFiles are the system's and the user's config files as git finds
// them with the environment getenv.
func GlobalFiles(getenv func(string) string) []string {
	var out []string
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		out = append(out, g)
	} else {
		if h := getenv("HOME"); h != "" {
			out = append(out, filepath.Join(h, ".gitconfig"))
		}
		if x := getenv("XDG_CONFIG_HOME"); x != "" {
			out = append(out, filepath.Join(x, "git", "config"))
		} else if h := getenv("HOME"); h != "" {
			out = append(out, filepath.Join(h, ".config", "git", "config"))
		}
	}
	if s := getenv("GIT_CONFIG_SYSTEM"); s != "" {
		out = append(out, s)
	} else {
		out = append(out, "/etc/gitconfig")
	}
	if c := getenv("GIT_CONFIG"); c != "" {
		out = append(out, c)
	}
	return out
}

// Targets lists what git, run in the repository whose git dir is gitDir
// (or whose work tree's .git file it is), obeys or runs because of its
// config files (the global ones, then the git dir's config and
// config.worktree; a linked worktree's common config and its own
// config.worktree): every file they include, whatever
// the condition (git may meet it), followed into what those include; and
// core.hooksPath, with the directory above a hooks directory named _
// (husky's stubs there run the hooks one level up); init.templateDir,
// whose hooks git init and clone install; and the programs that the values
// of ProgramKey's variables name by a path (programPath, holdable). A relative include is
// relative to the including file's directory, a relative hooksPath to the
// work tree (the parent of a .git, core.worktree, or the one a linked
// worktree's git dir names: each worktree has its own husky); ~/ is home. Paths git
// would expand otherwise (%(prefix)/) are left out. So are, when a hook
// manager's hook is installed in one of those hooks directories or in the
// git dir's hooks/, the files in the work tree whose commands it runs
// (hookConfigs). With gitDir "", only what the global files name that
// needs no repository: their includes and an absolute hooksPath.
func Targets(gitDir string, global []string, home string) []string {
	return NewFinder(global, home).Targets(gitDir)
}

// Finder finds the Targets of several repositories at one moment (a run's
// writable roots), reading each config file once.
type Finder struct {
	global []string
	home   string
	read   map[string][]Entry
}

// NewFinder is a Finder for the global config files global, home being the
// user's home directory.
func NewFinder(global []string, home string) *Finder {
	return &Finder{global: global, home: home, read: map[string][]Entry{}}
}

// Entries is Read, once per file: nil for one that cannot be read. A nil
// Finder reads each time.
func (f *Finder) Entries(file string) []Entry {
	if f == nil {
		e, _ := Read(file)
		return e
	}
	e, ok := f.read[file]
	if !ok {
		e, _ = Read(file)
		f.read[file] = e
	}
	return e
}

// Targets is the package's Targets for gitDir.
func (f *Finder) Targets(gitDir string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	var common, worktree string
	if gitDir != "" {
		gitDir, common, worktree = layout(gitDir)
	}
	local := filepath.Join(common, "config")
	if gitDir != "" && common == gitDir {
		// A linked worktree's work tree is the one its git dir names, not
		// the main work tree's core.worktree.
		for _, e := range f.Entries(local) {
			if e.Section == "core" && e.Sub == "" && e.Key == "worktree" {
				worktree = path(e.Value, gitDir, f.home)
			}
		}
	}
	var hookDirs []string
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > maxDepth {
			return
		}
		for _, e := range f.Entries(file) {
			switch {
			case e.Key == "path" && (e.Section == "include" || e.Section == "includeif"):
				if p := path(e.Value, filepath.Dir(file), f.home); p != "" {
					add(p)
					read(p, depth+1)
				}
			case ProgramKey(e.Section, e.Sub, e.Key):
				if p := programPath(e.Value, worktree, f.home); p != "" && holdable(p) {
					add(p)
				}
			case e.Section == "init" && e.Sub == "" && e.Key == "templatedir":
				// git init and clone copy its hooks into the new repository.
				if p := path(e.Value, "", f.home); p != "" && filepath.IsAbs(p) {
					add(p)
				}
			case e.Section == "core" && e.Sub == "" && e.Key == "hookspath":
				h := e.Value
				if !filepath.IsAbs(h) && !strings.HasPrefix(h, "~") {
					if worktree == "" {
						continue // no work tree for it to be relative to
					}
					h = filepath.Join(worktree, h)
				}
				if p := path(h, worktree, f.home); p != "" {
					add(p)
					hookDirs = append(hookDirs, p)
					if filepath.Base(p) == "_" {
						add(filepath.Dir(p))
						hookDirs = append(hookDirs, filepath.Dir(p))
					}
				}
			}
		}
	}
	for _, g := range f.global {
		read(g, 0)
	}
	if gitDir == "" {
		return out
	}
	read(local, 0)
	read(filepath.Join(gitDir, "config.worktree"), 0)
	for _, dir := range append(hookDirs, filepath.Join(common, "hooks")) {
		for _, c := range hookConfigs(dir, worktree) {
			add(c)
		}
	}
	return out
}

// programPath is the file a program value runs when its first word is a
// path (absolute, ~/, or relative: to the work tree, where git runs it);
// "" for a program found on PATH, a boolean (core.fsmonitor = true) or a
// value it cannot split.
func programPath(v, worktree, home string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "!")
	words, err := shlex.Split(v)
	if err != nil || len(words) == 0 {
		return ""
	}
	w := words[0]
	if !strings.Contains(w, "/") {
		return ""
	}
	if !filepath.IsAbs(w) && !strings.HasPrefix(w, "~") {
		if worktree == "" {
			return ""
		}
		return filepath.Join(worktree, w)
	}
	return path(w, "", home)
}

// holdable says whether the program p can be held read-only: a regular
// file, or nothing yet, reached without a symbolic link. One that is a link
// or behind one (a virtualenv's python, which nbstripout's filter names) is
// left out: a link cannot be held, and the sandbox would refuse every run
// over it.
func holdable(p string) bool {
	if st, err := os.Lstat(p); err == nil && !st.Mode().IsRegular() {
		return false
	}
	return (*pathmemo.Memo)(nil).LinkBelow(string(filepath.Separator), p) == ""
}

// layout resolves what Targets is given, a git dir or a work tree's .git
// file (a linked worktree's, a submodule's), into the git dir, its common
// dir and its work tree ("" when git would find none). A linked worktree's
// git dir (.git/worktrees/NAME) names the common dir, whose config and
// hooks every worktree shares, in its commondir file, and the work tree's
// .git file in its gitdir file; its own config is config.worktree.
func layout(p string) (gitDir, common, worktree string) {
	gitDir = p
	if t, ok := GitdirTarget(p, nil); ok {
		gitDir, worktree = t, filepath.Dir(p)
	} else if filepath.Base(p) == ".git" {
		worktree = filepath.Dir(p)
	}
	common = gitDir
	if c := firstLine(filepath.Join(gitDir, "commondir")); c != "" {
		common = resolved(c, gitDir)
		if worktree == "" {
			if g := firstLine(filepath.Join(gitDir, "gitdir")); g != "" {
				worktree = filepath.Dir(resolved(g, gitDir))
			}
		}
	}
	return gitDir, common, worktree
}

// GitdirTarget is the git dir a .git file ("gitdir: PATH", a linked
// worktree's or a submodule's) points at, relative to the file's
// directory, resolved through m; ok is false when gitfile is no such
// file or the git dir does not exist.
func GitdirTarget(gitfile string, m *pathmemo.Memo) (string, bool) {
	if st, err := m.Lstat(gitfile); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	dir, ok := strings.CutPrefix(firstLine(gitfile), "gitdir:")
	if dir = strings.TrimSpace(dir); !ok || dir == "" {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(gitfile), dir)
	}
	rp, err := m.EvalSymlinks(dir)
	return rp, err == nil
}

// firstLine is the first line of the small file p, trimmed ("" when
// unreadable).
func firstLine(p string) string {
	f, err := regfile.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return strings.TrimSpace(line)
}

// resolved is the path v, relative to base when not absolute, with its
// symbolic links resolved when it exists: a root is compared resolved.
func resolved(v, base string) string {
	if !filepath.IsAbs(v) {
		v = filepath.Join(base, v)
	}
	if r, err := filepath.EvalSymlinks(v); err == nil {
		return r
	}
	return filepath.Clean(v)
}

// path is a path value of a config file as git reads it: relative to base,
// ~/ in home. "" for an empty one, another user's home, or one git expands
// otherwise.
func path(v, base, home string) string {
	switch {
	case v == "" || strings.HasPrefix(v, "%("):
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, v[1:])
	case strings.HasPrefix(v, "~"):
		return ""
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	}
	return filepath.Join(base, v)
}
