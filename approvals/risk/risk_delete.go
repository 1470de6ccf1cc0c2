package risk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/sandbox"
)

// Deletion: what rm, find -delete and the like remove, counted on disk, and
// whether it is the workspace's data, its version control or the system.

func (as *Assessor) remove(prog string, args []string) {
	recursive, force := false, false
	var targets []string
	for i, a := range args {
		if a == "--" {
			targets = append(targets, args[i+1:]...)
			break
		}
		switch {
		case a == "--recursive":
			recursive = true
		case a == "--force":
			force = true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			recursive = recursive || strings.ContainsAny(a, "rR")
			force = force || strings.ContainsRune(a, 'f')
		case strings.HasPrefix(a, "--"):
		default:
			targets = append(targets, a)
		}
	}
	if prog == "shred" {
		force = true
	}
	for _, t := range targets {
		if strings.ContainsAny(t, "$`") {
			as.Add(High, DataDeletion, "deletes paths computed at run time: "+t)
			continue
		}
		if strings.ContainsAny(t, "*?[") && as.wholeArea(filepath.Dir(as.abs(t))) {
			as.Add(High, DataDeletion, "deletes everything in "+as.Display(filepath.Dir(as.abs(t)), true))
		}
		paths := as.expand(t)
		if len(paths) == 0 {
			as.deleteMissing(as.abs(t))
			continue
		}
		for _, p := range paths {
			as.deletePath(p, recursive || prog == "rmdir", force)
		}
	}
}

func (as *Assessor) deletePath(path string, recursive, force bool) {
	info, err := os.Lstat(path)
	if err != nil {
		as.deleteMissing(path)
		return
	}
	// Inside the writable roots the sandbox confines a deletion to what
	// the agent may change anyway: only what the facts below find (a large
	// tree, a whole root, repository data) makes it high risk. Elsewhere it
	// is high risk with or without -f.
	level := Medium
	outside := !as.deletable(path)
	if outside || as.critical(path) {
		level = High
	}
	if as.vcsData(path) {
		as.Add(High, DataDeletion, "deletes repository data: "+as.Display(path, info.IsDir()))
	}
	beyond := as.beyondSandbox(path)
	if !info.IsDir() {
		note, raise := as.undoNote(path, beyond, info.Size())
		if raise {
			level = High
		}
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes %s (%s)%s", as.Display(path, false), HumanBytes(info.Size()), note))
		return
	}
	if !recursive {
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes the directory %s if it is empty", as.Display(path, true)))
		return
	}
	files, bytes, complete := CountTree(path, largeDeleteFiles+1, maxCountTime)
	if files == 0 && complete {
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes the empty directory tree %s", as.Display(path, true)))
		return
	}
	if !complete || files > largeDeleteFiles || bytes > largeDeleteBytes {
		level = High
	}
	if complete && level < High && treeHoldsVCS(path) {
		as.Add(High, DataDeletion, "deletes a repository's data (a .git, .hg, .svn or .jj directory) under "+as.Display(path, true))
	}
	more := ""
	if !complete || files > largeDeleteFiles {
		more = "more than "
		files = min(files, largeDeleteFiles)
	}
	note, raise := as.undoNote(path, beyond, 0)
	if raise {
		level = High
	}
	as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes %s%s %s (%s) under %s%s", more, commas(files), plural(files, "file", "files"), HumanBytes(bytes), as.Display(path, true), note))
}

// largeDeleteFiles and largeDeleteBytes make a recursive deletion inside
// the writable roots high risk: past them it is no longer a build
// directory or a scratch tree.
const (
	largeDeleteFiles = 10_000
	largeDeleteBytes = 1 << 30
)

// vcsNames are the directories that hold a repository's history.
var vcsNames = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, ".bzr": true}

// vcsData reports a repository's history directory or a directory inside
// one (`.git`, `.git/objects`); a single file there (a stale index.lock, a
// ref) is an ordinary deletion.
func (as *Assessor) vcsData(p string) bool {
	p = filepath.Clean(p)
	if vcsNames[filepath.Base(p)] {
		return true
	}
	for d := filepath.Dir(p); d != filepath.Dir(d); d = filepath.Dir(d) {
		if vcsNames[filepath.Base(d)] {
			info, err := os.Lstat(p)
			return err == nil && info.IsDir()
		}
	}
	return false
}

// treeHoldsVCS reports whether a (small, already counted) tree holds a
// repository's history directory.
func treeHoldsVCS(root string) bool {
	found := false
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && vcsNames[d.Name()] {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// wholeArea reports a directory whose entire content a glob such as
// `dir/*` deletes when dir is a writable root, the workspace, a temporary
// directory, the home directory, or holds one of them.
func (as *Assessor) wholeArea(dir string) bool {
	dir = filepath.Clean(dir)
	areas := append(append([]string{as.ctx.Home}, as.roots...), tempDirs()...)
	for _, r := range areas {
		if r != "" && Within(dir, filepath.Clean(r)) {
			return true
		}
	}
	return false
}

// deleteMissing reports the deletion of a path that does not exist now: it
// may by the time the command runs, so outside the places the agent may
// write it is high risk all the same.
func (as *Assessor) deleteMissing(path string) {
	level := Medium
	if !as.deletable(path) || as.critical(path) || as.vcsData(path) {
		level = High
	}
	as.outsideRoots(as.beyondSandbox(path), level, DataDeletion, notWritable, fmt.Sprintf("deletes %s (nothing there now)", as.Display(path, false)))
}

// deletable reports whether deleting path stays where the agent may change
// things: the writable roots and the temporary directories (a home
// directory placed under one is still the user's).
func (as *Assessor) deletable(path string) bool {
	if as.Inside(path) {
		return true
	}
	if as.ctx.Home != "" && Within(as.ctx.Home, path) {
		return false
	}
	for _, dir := range tempDirs() {
		if dir != "" && path != filepath.Clean(dir) && Within(dir, path) {
			return true
		}
	}
	return false
}

// scratch reports a path inside /tmp or $TMPDIR (not the directory
// itself), writable roots of workspace-write: writing there is not writing
// outside the workspace. Under read-only nothing is writable; a home
// directory placed there is still the user's.
func (as *Assessor) scratch(p string) bool {
	if as.ctx.Sandbox.Mode == sandbox.ReadOnly || (as.ctx.Home != "" && Within(as.ctx.Home, p)) {
		return false
	}
	for _, dir := range []string{"/tmp", "/private/tmp", os.Getenv("TMPDIR")} {
		if dir != "" && filepath.Clean(p) != filepath.Clean(dir) && Within(dir, p) {
			return true
		}
	}
	return false
}

// tempDirs are the system's directories for temporary files.
func tempDirs() []string {
	return []string{"/tmp", "/var/tmp", "/private/tmp", os.Getenv("TMPDIR")}
}

// maxCountedFiles and maxCountTime bound the walk that counts what a
// deletion removes; past them the fact says "more than".
const (
	maxCountedFiles = 1_000_000
	maxCountTime    = time.Second
)

// expand resolves a target against the cwd and expands glob characters the
// way the shell would.
func (as *Assessor) expand(t string) []string {
	p := as.abs(t)
	if strings.ContainsAny(t, "*?[") {
		matches, _ := filepath.Glob(p)
		return matches
	}
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	return []string{p}
}

// critical reports paths whose deletion is never routine.
func (as *Assessor) critical(p string) bool {
	p = filepath.Clean(p)
	if p == "/" || p == as.ctx.Home || p == filepath.Clean(as.ctx.Cwd) {
		return true
	}
	// A writable root, the workspace or a temporary directory itself, or a
	// directory that holds one.
	for _, r := range append(append(slices.Clone(as.roots), as.ctx.Sandbox.Workspace...), tempDirs()...) {
		if r != "" && Within(p, filepath.Clean(r)) {
			return true
		}
	}
	for _, dir := range tempDirs() {
		if dir != "" && p != filepath.Clean(dir) && Within(dir, p) {
			return false // /var/tmp/x is not /var
		}
	}
	for _, dir := range SystemDirs {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

var SystemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/opt", "/sys", "/proc", "/dev", "/root"}

// findDelete judges `find ... -delete` and `find ... -exec rm`: what
// find selects under its start directories. Inside the writable roots,
// selected by name or path (`find . -name '*.pyc' -delete`), the sandbox
// confines it like an rm of those files; everything else it may select
// (no name test, a start outside, repository data) is high risk.
func (as *Assessor) findDelete(args []string) {
	var roots []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	named := false
	for i, a := range args {
		switch a {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
			if i+1 < len(args) {
				// A pattern of wildcards alone (`-name '*'`) selects
				// everything: no name test at all.
				named = named || strings.Trim(args[i+1], "*?.[]/") != ""
				for _, el := range strings.Split(args[i+1], "/") {
					if vcsNames[strings.Trim(el, "*")] {
						as.Add(High, DataDeletion, "deletes repository data ("+args[i+1]+")")
					}
				}
			}
		}
	}
	for _, r := range roots {
		p := as.abs(r)
		level := Medium
		if strings.ContainsAny(r, "$`") || !as.deletable(p) && !as.Inside(p) || as.vcsData(p) || !named {
			level = High
		}
		stops := as.beyondSandbox(p) && !strings.ContainsAny(r, "$`")
		if !named {
			as.outsideRoots(stops, level, DataDeletion, notWritable, "deletes the files find matches under "+as.Display(p, true))
		} else {
			as.outsideRoots(stops, level, DataDeletion, notWritable, "deletes the files find matches by name under "+as.Display(p, true))
		}
	}
}
