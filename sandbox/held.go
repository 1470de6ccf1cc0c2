package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// Held is what stays read-only inside a directory the policy makes
// writable (a root, or a grant's directory once WithGrant added it), as a
// dialog shows it: the same protections as in every root.
type Held struct {
	Dir string
	// Repos are the repositories' metadata inside, relative to Dir
	// ("a/.git"; ".git" for Dir's own).
	Repos []string
	// Entries are the other protected entries that exist inside, relative
	// to Dir (".vscode", "b/.vscode", a PATH directory "bin").
	Entries []string
	// HomeDots counts the home directory's dot-entries held, when Dir is
	// or holds the home directory.
	HomeDots int
	// Projects are the directories below Dir's top that hold a repository
	// or a project's manifest (package.json, go.mod...), relative to Dir:
	// other projects, whose every file but these becomes writable.
	Projects []string
}

// repoMetaNames name a repository's metadata (the scan finds them at any depth).
var repoMetaNames = []string{".git", ".hg", ".jj", ".sl", ".svn", ".bzr", "_darcs", ".pijul", ".fslckout", "_FOSSIL_"}

// projectFiles mark a project's directory.
var projectFiles = []string{"package.json", "go.mod", "Cargo.toml", "pyproject.toml", "setup.py", "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile", "composer.json", "Makefile", "CMakeLists.txt", "deno.json", "mix.exs"}

// HeldInside says what stays read-only inside dir (absolute, links
// resolved), one of the policy's writable roots: its existing protected
// entries, what the scan finds below (repositories, protected names), the
// home's dot-entries and PATH directories held there. It scans dir as a
// run would (bounded, from the scan cache when fresh).
func (p Policy) HeldInside(dir string) (Held, error) {
	roots, err := p.Roots()
	if err != nil {
		return Held{}, err
	}
	i := slices.IndexFunc(roots, func(r protect.Root) bool { return r.Path == dir })
	if i < 0 {
		return Held{}, fmt.Errorf("%s is not among the writable roots", dir)
	}
	r := []protect.Root{roots[i]}
	protect.ScanRepos(r, nil)
	h := Held{Dir: dir}
	for _, path := range slices.Concat(r[0].Protected, r[0].Found) {
		if !pathutil.Within(dir, path) || path == dir {
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case r[0].Home != nil && filepath.Dir(path) == r[0].Home.Dir && strings.HasPrefix(filepath.Base(path), "."):
			h.HomeDots++
		case slices.Contains(repoMetaNames, filepath.Base(path)):
			h.Repos = append(h.Repos, rel)
		default:
			h.Entries = append(h.Entries, rel)
		}
	}
	h.Projects = projectsBelow(dir, h.Repos)
	slices.Sort(h.Repos)
	slices.Sort(h.Entries)
	h.Repos, h.Entries = slices.Compact(h.Repos), slices.Compact(h.Entries)
	return h, nil
}

// projectsBelow lists the directories below dir's top that hold one of
// repos, and those one level down that hold a project's manifest.
func projectsBelow(dir string, repos []string) []string {
	var out []string
	for _, r := range repos {
		if d := filepath.Dir(r); d != "." {
			out = append(out, d)
		}
	}
	entries, _ := protect.ReadDirNames(dir)
	for _, e := range entries {
		if !e.Dir || strings.HasPrefix(e.Name, ".") {
			continue
		}
		for _, f := range projectFiles {
			if _, err := os.Lstat(filepath.Join(dir, e.Name, f)); err == nil {
				out = append(out, e.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String lists what is held, for a dialog: "2 repositories (a/.git,
// b/.git), .vscode in b, the home directory's 40 dot-entries"; "" when
// nothing is.
func (h Held) String() string {
	var parts []string
	if n := len(h.Repos); n > 0 {
		word := "repositories"
		if n == 1 {
			word = "repository"
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", n, word, shortList(h.Repos)))
	}
	if len(h.Entries) > 0 {
		shown := make([]string, len(h.Entries))
		for i, e := range h.Entries {
			if d := filepath.Dir(e); d != "." {
				shown[i] = filepath.Base(e) + " in " + d
			} else {
				shown[i] = e
			}
		}
		parts = append(parts, shortList(shown))
	}
	if h.HomeDots > 0 {
		parts = append(parts, fmt.Sprintf("the home directory's %d dot-entries", h.HomeDots))
	}
	return strings.Join(parts, ", ")
}

// shortList joins up to 8 names, then says how many more there are.
func shortList(names []string) string {
	const most = 8
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}
