package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
)

// Every version control system's metadata is split as a git dir is (see
// gitdata.go and VCSes): the directory writable, so the tool works
// sandboxed, and what the tool executes or obeys read-only; a missing one
// is watched and moved away if the command makes it. A metadata file that
// is data and settings at once (Fossil's checkout database) is held whole.

// vcsLayout splits the metadata directory dir of v: dir writable, then its
// obeyed entries, then the git dirs inside it (gitLayout). An obeyed entry
// whose way passes through a file (jj's .jj/repo in a secondary workspace,
// which names the repository) has that file held instead.
func vcsLayout(dir string, v VCS, find *gitconfig.Finder) []GitPath {
	out := []GitPath{{Path: dir, Writable: true, VCS: v.Name}}
	for _, rel := range v.Obeyed {
		p, missing := heldOnTheWay(dir, rel)
		if !slices.ContainsFunc(out, func(g GitPath) bool { return g.Path == p }) {
			out = append(out, GitPath{Path: p, Missing: missing, VCS: v.Name})
		}
	}
	for _, rel := range v.GitDirs {
		if p := filepath.Join(dir, rel); IsGitDir(p) {
			out = append(out, gitLayout(p, find)...)
		}
	}
	return out
}

// heldOnTheWay is what holds dir/rel: rel itself (missing when it does not
// exist), or the first entry on its way that is not a directory.
func heldOnTheWay(dir, rel string) (string, bool) {
	cur := dir
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			return filepath.Join(dir, rel), true
		}
		if i < len(parts)-1 && !st.IsDir() {
			return cur, false
		}
	}
	return cur, false
}

// splitHere says whether v's metadata is split by vcsDirs (git's has its
// own layout, a whole-file one is held whole, one with nothing obeyed needs
// no split).
func splitHere(v VCS) bool { return v.Entry != ".git" && !v.Whole && len(v.Obeyed) > 0 }

// vcsDirs lists root's metadata directories other than git's that the
// sandbox splits: at its top, and those the scan found below (in a shared
// temporary directory only the top: one found there stays read-only as a
// whole, as a repository does).
func vcsDirs(r Root) []string {
	var out []string
	for _, v := range VCSes {
		if splitHere(v) {
			if p := filepath.Join(r.Path, v.Entry); isDir(p) {
				out = append(out, p)
			}
		}
	}
	if IsScratch(r.Path) {
		return out
	}
	for _, f := range r.Found {
		if v, ok := VCSOf(filepath.Base(f)); ok && splitHere(v) && isDir(f) && !heldAbove(f, r.Protected) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isDir says whether p is a directory, not a link to one.
func isDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}
