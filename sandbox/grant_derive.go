package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// DeriveGrant reads a sandboxed run's output for the narrowest grant that
// would have let it through, for a retry dialog: a denied read of a path
// the read policy hides gives read access to exactly that path; a write
// refused under a directory outside the writable roots ("Read-only file
// system", "Permission denied" naming a path) gives write access to the
// directory the path was to be written in (its nearest existing one). Only
// a grant ResolveGrant accepts is offered; ok is false when the output
// names nothing that fits (the retry then offers no sandboxed grant).
func (p Policy) DeriveGrant(cwd string, output ...[]byte) (g Grant, ok bool) {
	if !p.Sandboxed() {
		return Grant{}, false
	}
	roots, _ := p.roots(pathmemo.New()) // after the run: never the set-up's memo
	for _, out := range output {
		for _, line := range bytes.Split(out, []byte("\n")) {
			low := strings.ToLower(string(line))
			readOnly := strings.Contains(low, "read-only file system")
			denied := strings.Contains(low, "permission denied") || strings.Contains(low, "operation not permitted")
			if !readOnly && !denied {
				continue
			}
			for _, tok := range pathTokens(string(line)) {
				path, dirSyntax := tok, strings.HasSuffix(tok, "/")
				if !filepath.IsAbs(path) {
					if !filepath.IsAbs(cwd) || !strings.Contains(path, "/") {
						continue // a bare word is rarely a path
					}
					path = filepath.Join(cwd, path)
				}
				path = filepath.Clean(path)
				if devicePath(path) {
					continue // a refused connection (/dev/tcp/HOST/PORT) or a device: never a directory to grant
				}
				if _, hidden := p.HiddenBy(path); hidden && !readOnly {
					if r, err := p.ResolveGrant(Grant{Read: []string{path}}, ""); err == nil {
						return r, true
					}
					continue
				}
				dir := nearestDir(path, dirSyntax)
				if dir == "" || devicePath(dir) || inRoots(dir, roots) {
					continue
				}
				if r, err := p.ResolveGrant(Grant{Write: []string{dir}}, ""); err == nil {
					return r, true
				}
			}
		}
	}
	return Grant{}, false
}

// devicePath reports /dev and what is under it but /dev/shm (a directory of
// files): bash's /dev/tcp and /dev/udp name connections, the rest are
// devices. A denial naming one is no write refused in a directory.
func devicePath(path string) bool {
	return pathutil.Within("/dev", path) && !pathutil.Within("/dev/shm", path)
}

// pathTokens splits a tool's message into the words that may be paths:
// what starts with / or ./ or ../ between quotes, colons and spaces.
func pathTokens(line string) []string {
	f := strings.FieldsFunc(line, func(r rune) bool {
		switch r {
		case ' ', '\t', '\r', '\'', '"', '`', ':', ',', '(', ')', '[', ']', '‘', '’', '“', '”', '«', '»':
			return true
		}
		return false
	})
	var out []string
	for _, w := range f {
		if strings.HasPrefix(w, "/") || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") {
			out = append(out, w)
		}
	}
	return out
}

// nearestDir is the existing directory a write of path happens in: path
// itself when the message wrote it as a directory (a trailing slash), else
// its parent, walking up past what does not exist yet.
func nearestDir(path string, isDir bool) string {
	cur := filepath.Dir(path)
	if isDir {
		cur = path
	}
	for {
		if st, err := os.Stat(cur); err == nil {
			if st.IsDir() {
				return cur
			}
			return ""
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return ""
		}
		cur = parent
	}
}

func inRoots(dir string, roots []protect.Root) bool {
	real := pathmemo.ResolveExisting(dir)
	for _, r := range roots {
		if pathutil.Within(r.Path, real) {
			return true
		}
	}
	return false
}
