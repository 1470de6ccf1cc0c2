package protect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/pathutil"
)

// A scan of /tmp lists hundreds of directories (everyone's scratch, three
// levels down), which took most of a one-shot `warden exec`. The scan store
// keeps, in Warden's state directory, what each directory held the last
// time it was listed, keyed by its identity and change time (device,
// inode, ctime): a directory whose ctime is the one recorded holds the same
// entries, since any creation, removal or rename in it sets its ctime, and
// no unprivileged process can set a ctime. So a rescan stats each directory
// and lists only those that changed; it finds exactly what a full listing
// would.
//
// Two rules keep that true. A directory is recorded only when its ctime was
// already older than scanSettled when it was looked at: a change in the same
// clock tick as the look (coarse timestamps) could otherwise leave the ctime
// as recorded. And only on filesystems that keep ctime (dirStampOf says
// which). The store lives in the state directory, which no sandboxed
// command can write (a protected path of every run); a run that would let
// one write there does not use it.

const (
	scanSettled   = time.Second
	scanStoreMax  = 50000 // records kept at most
	scanStoreName = "scan-cache"
)

// dirStamp is a directory's identity and change time.
type dirStamp struct {
	dev, ino uint64
	ctime    int64 // nanoseconds
}

type dirRecord struct {
	key     dirStamp
	entries []DirEntry // its subdirectories and the files a scan may hold (mayHold)
	gen     uint64     // the last scan that looked at it
}

// scanGen numbers the scans.
var scanGen atomic.Uint64

// scanStore is the process's copy of the store.
var scanStore = struct {
	sync.Mutex
	path    string
	epoch   uint64 // counts the switches of path
	loaded  bool
	recs    map[string]*dirRecord
	changed bool
}{}

// storeListings counts the directories listed for lack of a record (tests).
var storeListings atomic.Int64

// useScanStore opens the store at dir/scan-cache for this run's scans.
// dir empty: no store.
func useScanStore(dir string) {
	scanStore.Lock()
	defer scanStore.Unlock()
	p := ""
	if dir != "" {
		p = filepath.Join(dir, scanStoreName)
	}
	if p != scanStore.path {
		scanStore.path, scanStore.loaded, scanStore.recs, scanStore.changed = p, false, nil, false
		scanStore.epoch++
	}
}

// storeList returns dir's entries, from the store when dir has not changed
// since it was recorded, else listed (and recorded when it may be). gen is
// the scan's number.
func storeList(dir string, gen uint64) ([]DirEntry, error) {
	scanStore.Lock()
	if scanStore.path == "" {
		scanStore.Unlock()
		return ReadDirNames(dir)
	}
	if !scanStore.loaded {
		scanStore.recs = loadScanStore(scanStore.path)
		scanStore.loaded = true
	}
	rec := scanStore.recs[dir]
	if rec != nil {
		rec.gen = gen
	}
	epoch := scanStore.epoch
	scanStore.Unlock()
	now := time.Now()
	k, kept := dirStampOf(dir) // before the listing: a change during it moves the ctime on
	if rec != nil && kept && k == rec.key {
		return rec.entries, nil
	}
	storeListings.Add(1)
	entries, err := ReadDirNames(dir)
	if err != nil {
		return entries, err
	}
	scanStore.Lock()
	defer scanStore.Unlock()
	if scanStore.epoch != epoch {
		// Another run switched the store (or turned it off) meanwhile: this
		// listing belongs to no store now.
		return entries, nil
	}
	if kept && k.ctime < now.Add(-scanSettled).UnixNano() {
		var keep []DirEntry
		for _, e := range entries {
			if e.Dir || mayHold(e.Name) {
				keep = append(keep, e)
			}
		}
		scanStore.recs[dir] = &dirRecord{key: k, entries: keep, gen: gen}
		scanStore.changed = true
	} else if rec != nil {
		delete(scanStore.recs, dir)
		scanStore.changed = true
	}
	return entries, nil
}

// pruneStore forgets the records below root (but not in skip) that scan gen
// did not look at: gone, or out of its reach.
func pruneStore(root string, skip []string, gen uint64) {
	scanStore.Lock()
	defer scanStore.Unlock()
	for p, r := range scanStore.recs {
		if r.gen != gen && pathutil.Within(root, p) && !pathutil.WithinAny(p, skip) {
			delete(scanStore.recs, p)
			scanStore.changed = true
		}
	}
}

// saveScanStore writes the store when a scan changed it: a new file
// renamed over the old, so a reader sees one or the other.
func saveScanStore() {
	scanStore.Lock()
	if scanStore.path == "" || !scanStore.changed {
		scanStore.Unlock()
		return
	}
	scanStore.changed = false
	path, b := scanStore.path, encodeScanStore()
	scanStore.Unlock()
	if !replaceFile(path, b) {
		scanStore.Lock()
		scanStore.changed = true // a cache: the next save writes it
		scanStore.Unlock()
	}
}

// encodeScanStore is the store's file. Called with scanStore's lock.
func encodeScanStore() []byte {
	var b []byte
	b = append(b, scanStoreMagic...)
	n := 0
	for p, r := range scanStore.recs {
		if n++; n > scanStoreMax {
			break
		}
		b = appendString(b, p)
		b = binary.AppendUvarint(b, r.key.dev)
		b = binary.AppendUvarint(b, r.key.ino)
		b = binary.AppendUvarint(b, uint64(r.key.ctime))
		b = binary.AppendUvarint(b, uint64(len(r.entries)))
		for _, e := range r.entries {
			var flags byte
			if e.Dir {
				flags |= 1
			}
			if e.Regular {
				flags |= 2
			}
			b = append(b, flags)
			b = appendString(b, e.Name)
		}
	}
	return b
}

// scanStoreMagic names the format; version 1 kept no file but .git.
const scanStoreMagic = "warden-scan-cache 2\n"

// storeMatcher is the widest Matcher: MISE_ENV's names are kept by their
// form (mayHold), whatever the environment of the run that lists.
var storeMatcher = NewMatcher(func(string) string { return "" })

// mayHold says whether a file named name may be held by a scan
// (scanHolds), in any run's environment.
func mayHold(name string) bool {
	lower := strings.ToLower(name)
	return storeMatcher.Entry("", name) != "" || HasSuffix(name) ||
		strings.HasSuffix(lower, ".toml") && (strings.HasPrefix(lower, "mise.") || strings.HasPrefix(lower, ".mise."))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// loadScanStore reads the store; anything unreadable is an empty store.
func loadScanStore(path string) map[string]*dirRecord {
	recs := map[string]*dirRecord{}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte(scanStoreMagic)) {
		return recs
	}
	r := storeReader{b: data[len(scanStoreMagic):]}
	for len(r.b) > 0 && r.err == nil {
		p := r.str()
		rec := &dirRecord{key: dirStamp{dev: r.uint(), ino: r.uint(), ctime: int64(r.uint())}}
		n := r.uint()
		if n > 1<<20 {
			return map[string]*dirRecord{}
		}
		for range n {
			flags := r.byte()
			rec.entries = append(rec.entries, DirEntry{Name: r.str(), Dir: flags&1 != 0, Regular: flags&2 != 0})
		}
		if r.err == nil {
			recs[p] = rec
		}
	}
	if r.err != nil {
		return map[string]*dirRecord{}
	}
	return recs
}

type storeReader struct {
	b   []byte
	err error
}

var errStore = errors.New("scan cache: truncated")

func (r *storeReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errStore, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *storeReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errStore
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *storeReader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errStore, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
