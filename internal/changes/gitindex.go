package changes

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// gitRepo is the repository a root is in: where its objects are read back
// from, and which of the root's files its index vouches for.
type gitRepo struct {
	gitDir  string // the directory git --git-dir takes
	prefix  string // the root's path below the work tree's top, "" at the top
	hashLen int
}

// indexEntry is a file as git's index last saw it.
type indexEntry struct {
	oid               []byte // into the index file's bytes, which the entries keep
	mtimeSec, mtimeNs uint32
	ctimeSec, ctimeNs uint32
	ino, mode, size   uint32
}

// findRepo finds the git work tree root is in, from root up. ok is false
// outside a repository.
func findRepo(root string) (gitRepo, bool) {
	for dir := root; ; dir = filepath.Dir(dir) {
		if gd, ok := gitDirAt(dir); ok {
			rel, err := filepath.Rel(dir, root)
			if err != nil {
				return gitRepo{}, false
			}
			r := gitRepo{gitDir: gd, hashLen: 20}
			if rel != "." {
				r.prefix = filepath.ToSlash(rel) + "/"
			}
			if objectFormatSHA256(gd) {
				r.hashLen = 32
			}
			if filtered(dir, gd) {
				return gitRepo{}, false // the index's blobs are not the files' bytes
			}
			return r, true
		}
		if filepath.Dir(dir) == dir {
			return gitRepo{}, false
		}
	}
}

// gitDirAt is dir's .git: a directory, or a file naming one (worktrees,
// submodules).
func gitDirAt(dir string) (string, bool) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return p, true
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	gd := strings.TrimSpace(line)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return gd, true
}

// filtered reports a repository whose files may differ from their blobs:
// a clean/smudge filter (LFS) or line-ending conversion, set in the top
// .gitattributes, info/attributes or the repository's configuration. Its
// files are copied like untracked ones. (A .gitattributes deeper in the
// tree is not read: the size check at undo time refuses such a file.)
func filtered(top, gitDir string) bool {
	for _, p := range []string{filepath.Join(top, ".gitattributes"), filepath.Join(gitDir, "info", "attributes")} {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, word := range strings.Fields(string(data)) {
			if strings.HasPrefix(word, "filter=") || strings.HasPrefix(word, "eol=") || word == "text" || strings.HasPrefix(word, "text=") || strings.HasPrefix(word, "working-tree-encoding=") {
				return true
			}
		}
	}
	data, _ := os.ReadFile(filepath.Join(gitDir, "config"))
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "autocrlf") && !strings.EqualFold(strings.TrimSpace(v), "false") {
			return true
		}
	}
	return false
}

func objectFormatSHA256(gitDir string) bool {
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "objectformat") && strings.EqualFold(strings.TrimSpace(v), "sha256") {
			return true
		}
	}
	return false
}

// indexOf reads the entries git vouches for under the root, keyed by path
// relative to the root. Entries git itself would not trust are left out
// (racy: modified in the second the index was written; assumed unchanged;
// skipped in the work tree; in conflict): their files are copied instead.
// An index Warden cannot read whole (a split index, an unknown version)
// vouches for nothing.
//
// want, when not nil, names the only paths wanted: the index is read
// through without building a map of the rest.
func (r gitRepo) indexOf(want map[string]bool) map[string]indexEntry {
	p := filepath.Join(r.gitDir, "index")
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 12+r.hashLen || string(b[:4]) != "DIRC" {
		return nil
	}
	stamp := fi.ModTime()
	entries, ok := parseIndex(b, r.hashLen, r.prefix, [2]uint32{uint32(stamp.Unix()), uint32(stamp.Nanosecond())}, want)
	if !ok {
		return nil
	}
	return entries
}

// index reads every entry git vouches for.
func (r gitRepo) index() map[string]indexEntry { return r.indexOf(nil) }

const (
	flagAssumeValid = 0x8000
	flagExtended    = 0x4000
	flagStageMask   = 0x3000
	extSkipWorktree = 0x4000
	extIntentToAdd  = 0x2000
	modeRegular     = 0o100644
	modeExecutable  = 0o100755
	indexEntryFixed = 40 // ctime, mtime, dev, ino, mode, uid, gid, size
)

// parseIndex reads a version 2 to 4 index's trustworthy regular-file
// entries below prefix, keyed by their path after it; ok is false for
// anything it does not fully understand. An entry whose mtime is not
// before racyAt (the index file's) is racy: the file may have changed in
// the same tick the index was written, and git itself would look again.
func parseIndex(b []byte, hashLen int, prefix string, racyAt [2]uint32, want map[string]bool) (map[string]indexEntry, bool) {
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, false
	}
	count := binary.BigEndian.Uint32(b[8:12])
	body := b[:len(b)-hashLen]
	size := int(count)
	if want != nil {
		size = len(want)
	}
	out := make(map[string]indexEntry, size)
	off := 12
	var prev []byte
	u32 := func(at int) uint32 { return binary.BigEndian.Uint32(body[at : at+4]) }
	for n := uint32(0); n < count; n++ {
		fixed := indexEntryFixed + hashLen + 2
		if off+fixed > len(body) {
			return nil, false
		}
		start := off
		e := indexEntry{
			ctimeSec: u32(off), ctimeNs: u32(off + 4), mtimeSec: u32(off + 8), mtimeNs: u32(off + 12),
			ino: u32(off + 20), mode: u32(off + 24), size: u32(off + 36),
			oid: body[off+40 : off+40+hashLen],
		}
		flags := binary.BigEndian.Uint16(body[off+40+hashLen : off+fixed])
		off += fixed
		var ext uint16
		if flags&flagExtended != 0 {
			if version < 3 || off+2 > len(body) {
				return nil, false
			}
			ext = binary.BigEndian.Uint16(body[off : off+2])
			off += 2
		}
		var name []byte
		if version == 4 {
			strip, used := varint(body[off:])
			if used == 0 || strip > uint64(len(prev)) {
				return nil, false
			}
			off += used
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, false
			}
			name = append(append([]byte{}, prev[:len(prev)-int(strip)]...), body[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, false
			}
			name = body[off : off+end : off+end]
			off = start + (off-start+end+8)/8*8 // NUL-padded to a multiple of 8
		}
		prev = name
		trusted := flags&(flagAssumeValid|flagStageMask) == 0 && ext&(extSkipWorktree|extIntentToAdd) == 0
		racy := e.mtimeSec > racyAt[0] || e.mtimeSec == racyAt[0] && e.mtimeNs >= racyAt[1]
		if trusted && !racy && (e.mode == modeRegular || e.mode == modeExecutable) && bytes.HasPrefix(name, []byte(prefix)) {
			name := name[len(prefix):]
			if want != nil && !want[string(name)] {
				continue
			}
			// The names are not copied: the map keeps the index's bytes.
			out[unsafe.String(unsafe.SliceData(name), len(name))] = e
		}
	}
	if hasExtension(body[off:], "link") {
		return nil, false // a split index: entries live in a shared index too
	}
	return out, true
}

// hasExtension reports whether the index extensions in b include sig.
func hasExtension(b []byte, sig string) bool {
	for len(b) >= 8 {
		size := binary.BigEndian.Uint32(b[4:8])
		if string(b[:4]) == sig {
			return true
		}
		if uint64(size) > uint64(len(b)-8) {
			return false
		}
		b = b[8+size:]
	}
	return false
}

// varint is the index version 4 offset encoding.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	v := uint64(b[0] & 0x7f)
	i := 1
	for b[i-1]&0x80 != 0 {
		if i >= len(b) {
			return 0, 0
		}
		v = (v+1)<<7 | uint64(b[i]&0x7f)
		i++
	}
	return v, i
}

// name is the entry's object name, in hex.
func (ie indexEntry) name() string { return hex.EncodeToString(ie.oid) }

// matches reports whether the file's stat is the one git recorded: its
// content is then the entry's blob.
func (ie indexEntry) matches(e Entry) bool {
	if !e.regular() || uint32(e.Size) != ie.size {
		return false
	}
	exec := e.Mode.Perm()&0o100 != 0
	if exec != (ie.mode == modeExecutable) {
		return false
	}
	if uint32(e.Mtime/1e9) != ie.mtimeSec || uint32(e.Mtime%1e9) != ie.mtimeNs {
		return false
	}
	if e.Ctime != 0 && (uint32(e.Ctime/1e9) != ie.ctimeSec || uint32(e.Ctime%1e9) != ie.ctimeNs) {
		return false
	}
	return e.Ino == 0 || uint32(e.Ino) == ie.ino
}

// cachedIndex is a repository's index as last read, read again only when
// the file changed.
type cachedIndex struct {
	stamp   Entry
	entries map[string]indexEntry
}

func (c *cachedIndex) get(r gitRepo) map[string]indexEntry {
	fi, err := os.Stat(filepath.Join(r.gitDir, "index"))
	if err != nil {
		return nil
	}
	if stamp := entryOf(fi); c.entries == nil || stamp != c.stamp {
		c.stamp, c.entries = stamp, r.index()
	}
	return c.entries
}
