package changes

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// skipDirs are version-control metadata: the sandbox holds them read-only,
// and a repository's history is not the workspace's content. Of a .git
// directory, what git runs or obeys is recorded (gitEntries): a run
// without the sandbox may change it, and it must be named and undone.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true}

// gitEntries are the parts of a .git directory that are recorded: its
// configuration, and the files directly in hooks/ and info/.
var gitEntries = []string{"config", "hooks", "info"}

// tree is a root's files by slash-separated path relative to the root:
// regular files, links, other non-directories, and the directories that
// are empty (a directory with entries is known by them).
type tree map[string]Entry

// subdir is a directory entry readDir found.
type subdir struct {
	name string
	mode fs.FileMode
}

// walk lists every file under root (links not followed), in parallel: on a
// warm cache the cost is the system calls, one lstat per file. Directories
// it cannot read are listed in unreadable, not fatal: their files are
// neither recorded nor recoverable.
func walk(root string) (t tree, unreadable []string) {
	return walkFrom(root, ".", nil)
}

// walkFrom lists the files under the directory top of root (a path
// relative to it), calling mark, when set, on each directory before it is
// listed: an entry changed after is then both listed or not and reported.
func walkFrom(root, top string, mark func(rel string)) (t tree, unreadable []string) {
	t = tree{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var visit func(rel string, mode fs.FileMode)
	visit = func(rel string, mode fs.FileMode) {
		defer wg.Done()
		if mark != nil {
			mark(rel)
		}
		var local []string // names, then their entries
		var entries []Entry
		subdirs, err := readDir(filepath.Join(root, filepath.FromSlash(rel)), func(name string, e Entry) {
			local, entries = append(local, name), append(entries, e)
		})
		if err != nil {
			mu.Lock()
			unreadable = append(unreadable, rel)
			mu.Unlock()
			return
		}
		gitFiles := tree{}
		for _, sub := range subdirs {
			p := path.Join(rel, sub.name)
			if sub.name == ".git" {
				if mark != nil {
					for _, d := range []string{p, p + "/hooks", p + "/info"} {
						mark(d)
					}
				}
				listGit(root, p, gitFiles)
			}
			if skipDirs[sub.name] {
				continue
			}
			wg.Add(1)
			select {
			case sem <- struct{}{}:
				go func() { defer func() { <-sem }(); visit(p, sub.mode) }()
			default:
				visit(p, sub.mode)
			}
		}
		mu.Lock()
		if len(local) == 0 && len(subdirs) == 0 && rel != "." {
			t[rel] = dirEntry(mode)
		}
		for i, name := range local {
			t[path.Join(rel, name)] = entries[i]
		}
		for p, e := range gitFiles {
			t[p] = e
		}
		mu.Unlock()
	}
	var mode fs.FileMode
	if top != "." {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(top)))
		if err != nil || !fi.IsDir() {
			return t, nil // gone, or no longer a directory, since it was reported
		}
		mode = fi.Mode()
	}
	wg.Add(1)
	visit(top, mode)
	wg.Wait()
	return t, unreadable
}

// listGit adds gitEntries of the .git directory rel to t.
func listGit(root, rel string, t tree) {
	for _, name := range gitEntries {
		p := path.Join(rel, name)
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			t[p] = entryOf(fi)
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(p)))
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if fi, err := e.Info(); err == nil {
				t[path.Join(p, e.Name())] = entryOf(fi)
			}
		}
	}
}

// inScope reports whether walk would list rel: a path in no version
// control metadata, or one of a .git directory's gitEntries.
func inScope(rel string) bool {
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if !skipDirs[part] {
			continue
		}
		rest := parts[i+1:]
		if part != ".git" || len(rest) == 0 {
			return false
		}
		switch {
		case len(rest) == 1 && rest[0] == "config":
			return true
		case len(rest) == 2 && (rest[0] == "hooks" || rest[0] == "info"):
			return true
		}
		return false
	}
	return true
}
