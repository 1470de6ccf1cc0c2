package gitfacts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// gitlinkMode is the index mode of a submodule entry (S_IFGITLINK).
const gitlinkMode = 0o160000

// indexGitlinks lists the submodule paths (gitlinks) recorded in a git
// index file: the paths git status, diff and submodule recurse into,
// whatever .gitmodules says. A missing index has none; an index Warden
// cannot read fully (an unknown version, a split index) is an error, and
// the caller fails closed.
func indexGitlinks(path string, hashLen int) ([]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, errors.New("not a git index")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	count := binary.BigEndian.Uint32(b[8:12])
	body := b[:len(b)-hashLen] // the trailing checksum
	off := 12
	fixed := 40 + hashLen + 2 // stat data, mode..size, object name, flags
	var out []string
	var prev []byte
	for n := uint32(0); n < count; n++ {
		if off+fixed > len(body) {
			return nil, errors.New("index truncated")
		}
		start := off
		mode := binary.BigEndian.Uint32(body[off+24 : off+28])
		flags := binary.BigEndian.Uint16(body[off+40+hashLen : off+fixed])
		off += fixed
		if version >= 3 && flags&0x4000 != 0 {
			off += 2 // extended flags
		}
		var name []byte
		if version == 4 {
			strip, used := indexVarint(body[off:])
			if used == 0 || strip > uint64(len(prev)) {
				return nil, errors.New("index: bad path prefix")
			}
			off += used
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, errors.New("index truncated")
			}
			name = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), body[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, errors.New("index truncated")
			}
			name = body[off : off+end]
			off = start + (off-start+end+8)&^7 // NUL padding to 8 bytes
		}
		prev = name
		if mode&0o170000 == gitlinkMode {
			out = append(out, string(name))
		}
	}
	// Extensions: a split index keeps entries in another file.
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if sig == "link" {
			return nil, errors.New("split index")
		}
		off += 8 + size
	}
	return out, nil
}

// indexVarint decodes the offset encoding of index version 4.
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		c = b[i]
		i++
		v = ((v + 1) << 7) + uint64(c&127)
	}
	return v, i
}
