package protect

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/shellenv"
)

// Dirs are directories whose contents configure such tools.
var Dirs = slices.Concat(sharedDirs, []string{
	// mise's config directory; a dev container's initializeCommand runs on
	// the host when the editor reopens the folder in it.
	".mise", ".devcontainer",
})

// Files are files with the same power.
var Files = slices.Concat(sharedFiles, []string{
	// mise trusts a config by its path, not its content: a trusted one
	// rewritten stays trusted, and its enter hooks and env templates run
	// at the next prompt in the directory.
	"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml",
	// Vim's exrc (Neovim's are trusted by content), Emacs's directory
	// variables, a dev container's config.
	".vimrc", "_vimrc", "_exrc", ".gvimrc", "_gvimrc",
	".dir-locals.el", ".dir-locals-2.el", ".devcontainer.json",
})

// sharedDirs and sharedFiles are the entries that matter at the top of a
// shared temporary directory too (/tmp, $TMPDIR), where nobody opens a
// project or trusts a config: git finds a .git there from any directory
// below that is no repository (a build in /tmp/pip-build-x running git
// describe), and agents and editors look there.
var (
	sharedDirs  = slices.Concat(VCSEntries(), []string{".warden", ".codex", ".claude", ".cursor", ".agents", ".zed", ".vscode", ".idea", ".helix"})
	sharedFiles = []string{".envrc", ".mcp.json", ".gitmodules", ".lfsconfig", ".nvim.lua", ".nvimrc", ".exrc"}
)

// SharedNames are the Names kept at the top of a shared temporary
// directory: each protected path costs every run a few lookups, and the
// others (mise's configs, Vim's and Emacs's, a dev container's) are
// obeyed only in a directory the user works in or trusted.
func SharedNames() []string { return slices.Concat(sharedDirs, sharedFiles) }

// Subpaths are protected entries deeper than a root's top: mise's configs
// under .config (the rest of .config is the project's).
var Subpaths = []string{
	filepath.Join(".config", "mise.toml"), filepath.Join(".config", "mise.local.toml"), filepath.Join(".config", "mise"),
}

// Suffixes protect files by the end of their name: a VS Code workspace
// file (NAME.code-workspace) holds settings and tasks (runOn: folderOpen)
// as .vscode does, and the user opens it in a folder trusted by its path.
var Suffixes = []string{".code-workspace"}

// HasSuffix says whether name ends in one of Suffixes, in any letter case.
func HasSuffix(name string) bool {
	lower := strings.ToLower(name)
	for _, s := range Suffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

// Names are Dirs and Files.
func Names() []string { return slices.Concat(Dirs, Files) }

// Rel returns the protected entry that rel, a path relative to a root,
// is or is inside ("" none): the first of its parts that Matcher.Entry
// names (every .git and other VCS metadata, wherever it is), or a last
// part named with one of Suffixes. Letter case is ignored, as a
// case-insensitive volume ignores it.
func Rel(rel string, getenv func(string) string) string {
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	if last := parts[len(parts)-1]; HasSuffix(last) {
		return last
	}
	m := NewMatcher(getenv)
	for i, part := range parts {
		if name := m.Entry(filepath.Join(parts[:i]...), part); name != "" {
			return name
		}
	}
	return ""
}

// A Matcher says which entries of a tree are protected, the same for the
// patch guard (Rel) and the sandbox's scan of a root at any depth. It
// reads MISE_ENV once, when made.
type Matcher struct {
	names map[string]string // lower case → as listed
	subs  []subpath
}

type subpath struct {
	name  string   // as listed
	parts []string // lower case
}

// NewMatcher lists Names, Subpaths and the shellenv.MiseEnvNames of getenv.
func NewMatcher(getenv func(string) string) *Matcher {
	m := &Matcher{names: map[string]string{}}
	for _, n := range Names() {
		m.names[strings.ToLower(n)] = n
	}
	for _, n := range append(slices.Clone(Subpaths), shellenv.MiseEnvNames(getenv)...) {
		parts := strings.Split(strings.ToLower(n), string(filepath.Separator))
		if len(parts) == 1 {
			m.names[parts[0]] = n
			continue
		}
		m.subs = append(m.subs, subpath{n, parts})
	}
	return m
}

// Entry returns the protected entry that name, in the directory parent
// (relative to a root, "" its top), is itself ("" none): one of Names, or
// the end of one of Subpaths or of shellenv.MiseEnvNames. Suffixes are the
// caller's: they protect files only.
func (m *Matcher) Entry(parent, name string) string {
	lower := strings.ToLower(name)
	if n, ok := m.names[lower]; ok {
		return n
	}
	for _, s := range m.subs {
		if s.parts[len(s.parts)-1] != lower {
			continue
		}
		dir := parent
		matched := true
		for i := len(s.parts) - 2; i >= 0 && matched; i-- {
			base := filepath.Base(dir)
			matched = dir != "" && dir != "." && strings.ToLower(base) == s.parts[i]
			dir = filepath.Dir(dir)
			if dir == "." {
				dir = ""
			}
		}
		if matched {
			return s.name
		}
	}
	return ""
}
