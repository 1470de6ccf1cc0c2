package protect

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/pathutil"
)

// The scan is bounded (scanMaxDirs, scanDeadline, scanMaxFound), so a
// command can push a repository beyond it: flood its parent with
// directories, or move it below a flood. Two things keep such a repository
// (or a nested protected name) read-only. Every entry a scan holds is
// remembered, in this process and in
// Warden's state directory, and each run holds the remembered ones that
// still exist even when its scan stops short (withKnownRepos). And the
// directories between a root and a repository are pinned in the sandbox
// (bindProtected), so a command cannot move the repository to a new name
// the memory does not know.

const (
	// knownReposMax bounds the remembered set. When it is full, the ones
	// remembered first are kept and new ones are protected only while a
	// scan finds them: a command that makes thousands of fake .git
	// directories cannot push a real repository out of the memory.
	knownReposMax  = 10000
	knownReposName = "known-repos"
	knownReposHead = "warden-known-repos 1\n"
)

var knownRepos = struct {
	sync.Mutex
	path    string           // the file; "" when no file serves this run
	loaded  map[string]bool  // files merged in
	m       map[string]int64 // .git path → when first found (unix ns)
	cut     map[string]int64 // root → when its scan was last cut
	told    map[string]bool  // roots whose cut was reported
	full    bool             // a found .git was not remembered (reported once)
	changed bool
}{loaded: map[string]bool{}, m: map[string]int64{}, cut: map[string]int64{}, told: map[string]bool{}}

// ScanNotice receives what the scan has to say to the user (a root's scan
// cut by its bound), once per root and process. The server points it at
// its log.
var ScanNotice = func(msg string) { fmt.Fprintln(os.Stderr, "warden: "+msg) }

// useKnownRepos reads the remembered set kept in dir (Warden's state
// directory, see scanStoreDir) into this process's. dir empty: this run's
// command could write there, so the file is neither read nor written (the
// process's memory still serves).
func useKnownRepos(dir string) {
	knownRepos.Lock()
	defer knownRepos.Unlock()
	knownRepos.path = ""
	if dir == "" {
		return
	}
	knownRepos.path = filepath.Join(dir, knownReposName)
	if knownRepos.loaded[knownRepos.path] {
		return
	}
	knownRepos.loaded[knownRepos.path] = true
	m, cut := loadKnownRepos(knownRepos.path)
	for p, t := range m {
		if old, ok := knownRepos.m[p]; !ok || t < old {
			knownRepos.m[p] = t
		}
	}
	for r, t := range cut {
		knownRepos.cut[r] = max(knownRepos.cut[r], t)
	}
}

// withKnownRepos is a root's scan (found, cut: stopped at its bound) plus
// the repositories remembered below root (not in skip) that still exist.
// It remembers the scan's .git entries and forgets remembered ones that are
// gone. One the launcher cannot reach (a directory made unreadable) holds
// its directory instead, as the scan does.
func withKnownRepos(root string, skip []string, found []string, cut bool) []string {
	now := time.Now().UnixNano()
	knownRepos.Lock()
	for _, p := range found {
		if !mayHold(filepath.Base(p)) {
			continue // a gitdir: target, a directory held for its mode
		}
		if _, ok := knownRepos.m[p]; ok {
			continue
		}
		if len(knownRepos.m) >= knownReposMax {
			if !knownRepos.full {
				knownRepos.full = true
				defer ScanNotice(fmt.Sprintf("%d repositories are remembered, the most kept: %s and newer ones are read-only only while the scan finds them", knownReposMax, p))
			}
			continue
		}
		knownRepos.m[p] = now
		knownRepos.changed = true
	}
	if cut {
		if _, ok := knownRepos.cut[root]; !ok {
			knownRepos.changed = true
		}
		knownRepos.cut[root] = now
		if !knownRepos.told[root] {
			knownRepos.told[root] = true
			defer ScanNotice(fmt.Sprintf("the scan of %s for nested repositories and protected names stopped at its bound (%d directories, %d found): one there that Warden never found (a repository's config, a mise.toml, a .vscode) is writable by sandboxed commands; open a smaller workspace to have them all held", root, ScanMaxDirs, ScanMaxFound))
		}
	} else if _, ok := knownRepos.cut[root]; ok {
		delete(knownRepos.cut, root)
		knownRepos.changed = true
	}
	var check []string
	for p := range knownRepos.m {
		if pathutil.Within(root, p) && filepath.Dir(p) != root && !slices.Contains(found, p) && !pathutil.WithinAny(p, skip) {
			check = append(check, p)
		}
	}
	knownRepos.Unlock()
	if len(check) == 0 {
		return found
	}
	out := slices.Clone(found)
	var gone []string
	for _, p := range check {
		st, err := os.Lstat(p)
		switch {
		case err == nil && st.IsDir():
			out = append(out, p)
		case err == nil && st.Mode().IsRegular():
			out = append(out, p)
			if filepath.Base(p) == ".git" {
				if t, ok := gitconfig.GitdirTarget(p, nil); ok {
					out = append(out, t)
				}
			}
		case err == nil:
			// A symbolic link or other: not a repository now, and nothing
			// git would follow to run code from the host.
			gone = append(gone, p)
		case errors.Is(err, fs.ErrPermission):
			if h, ok := unlistable(root, filepath.Dir(p), err); ok && !slices.Contains(out, h) {
				out = append(out, h)
			}
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			gone = append(gone, p) // its owner removed it
		default:
			out = append(out, p) // unknown: hold it; the mount decides
		}
	}
	if len(gone) > 0 {
		knownRepos.Lock()
		for _, p := range gone {
			delete(knownRepos.m, p)
		}
		knownRepos.changed = true
		knownRepos.Unlock()
	}
	return out
}

// saveKnownRepos writes the remembered set when it changed: a new file
// renamed over the old.
func saveKnownRepos() {
	knownRepos.Lock()
	if knownRepos.path == "" || !knownRepos.changed {
		knownRepos.Unlock()
		return
	}
	knownRepos.changed = false
	path, b := knownRepos.path, encodeKnownRepos()
	knownRepos.Unlock()
	if !replaceFile(path, b) {
		// Still to save: a one-shot run's early scan may end before the
		// state directory is made (the audit log makes it), and the save
		// before the command starts must then write what it found.
		knownRepos.Lock()
		knownRepos.changed = true
		knownRepos.Unlock()
	}
}

// encodeKnownRepos is the file: a line per entry, "r <ns> <path>" for a
// repository, "c <ns> <root>" for a cut scan. Paths hold no newline (the
// scan skips such names: see below). Called with the lock.
func encodeKnownRepos() []byte {
	var b bytes.Buffer
	b.WriteString(knownReposHead)
	for _, kind := range []struct {
		tag string
		m   map[string]int64
	}{{"r", knownRepos.m}, {"c", knownRepos.cut}} {
		keys := make([]string, 0, len(kind.m))
		for k := range kind.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.ContainsRune(k, '\n') {
				continue // a newline in a path would break the line format
			}
			fmt.Fprintf(&b, "%s %d %s\n", kind.tag, kind.m[k], k)
		}
	}
	return b.Bytes()
}

// loadKnownRepos reads the file; a line it cannot read is skipped.
func loadKnownRepos(path string) (repos, cut map[string]int64) {
	repos, cut = map[string]int64{}, map[string]int64{}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte(knownReposHead)) {
		return repos, cut
	}
	for _, line := range strings.Split(string(data[len(knownReposHead):]), "\n") {
		tag, rest, _ := strings.Cut(line, " ")
		ts, p, _ := strings.Cut(rest, " ")
		t, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || !filepath.IsAbs(p) {
			continue
		}
		switch {
		case tag == "r" && len(repos) < knownReposMax:
			repos[filepath.Clean(p)] = t
		case tag == "c":
			cut[filepath.Clean(p)] = t
		}
	}
	return repos, cut
}

// CutGaps says, for each root not served by the index whose scan stopped
// at its bound, what this run leaves writable: every run says it, not only
// the first.
func CutGaps(roots []Root, indexed map[string]uint64) []string {
	knownRepos.Lock()
	defer knownRepos.Unlock()
	var gaps []string
	for _, r := range roots {
		if _, ok := indexed[r.Path]; ok {
			continue
		}
		if _, cut := knownRepos.cut[r.Path]; cut {
			gaps = append(gaps, fmt.Sprintf("the scan of %s stopped at its bound (%d directories, %d protected entries): a repository or protected name beyond it that Warden never found is writable, and one this command creates there may remain", r.Path, ScanMaxDirs, ScanMaxFound))
		}
	}
	return gaps
}

// ScanCutRoots lists the roots whose last scan, as recorded in Warden's
// state directory, stopped at its bound (for doctor).
func ScanCutRoots() []string {
	dir := stateDir()
	if dir == "" {
		return []string{}
	}
	_, cut := loadKnownRepos(filepath.Join(dir, knownReposName))
	roots := make([]string, 0, len(cut))
	for r := range cut {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	return roots
}
