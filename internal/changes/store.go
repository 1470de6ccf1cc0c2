package changes

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Store keeps the content of files, by their SHA-256, and each root's stat
// cache: the files whose content it holds and the stat they had. It lives
// in Warden's state directory, never in the user's tree.
type Store struct {
	dir    string
	copied atomic.Int64
}

// OpenStore is the store in dir (made when first written).
func OpenStore(dir string) *Store { return &Store{dir: dir} }

// Copied is how many bytes of files this process read into the store.
func (s *Store) Copied() int64 { return s.copied.Load() }

// Dir is where the store keeps its files.
func (s *Store) Dir() string { return s.dir }

// Sum is the store's name for content.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func (s *Store) blobPath(sum string) string {
	return filepath.Join(s.dir, "blobs", sum[:2], sum[2:])
}

// Has reports whether the store holds the content named sum.
func (s *Store) Has(sum string) bool {
	_, err := os.Lstat(s.blobPath(sum))
	return err == nil
}

// Put stores data and returns its name.
func (s *Store) Put(data []byte) (string, error) {
	sum := Sum(data)
	if s.Has(sum) {
		return sum, nil
	}
	return sum, writeFileAtomic(s.blobPath(sum), data)
}

// Get reads the content named sum, and checks it is that content.
func (s *Store) Get(sum string) ([]byte, error) {
	if len(sum) != 2*sha256.Size {
		return nil, fmt.Errorf("no content %q in Warden's change store", sum)
	}
	data, err := os.ReadFile(s.blobPath(sum))
	if err != nil {
		return nil, fmt.Errorf("read from Warden's change store: %w", err)
	}
	if Sum(data) != sum {
		return nil, fmt.Errorf("Warden's change store holds a damaged copy of %s", sum[:12])
	}
	return data, nil
}

// cached is a file whose content the store holds.
type cached struct {
	Entry Entry
	Sum   string
}

func (s *Store) cachePath(root string) string {
	h := sha256.Sum256([]byte(root))
	return filepath.Join(s.dir, "stat", hex.EncodeToString(h[:8])+".gob")
}

// loadCache is root's stat cache, its delta over its base; a missing or
// damaged one is empty (the files are copied again).
func (s *Store) loadCache(root string) map[string]cached {
	m := s.loadCacheFile(s.cachePath(root))
	for rel, c := range s.loadCacheFile(s.deltaPath(root)) {
		m[rel] = c
	}
	return m
}

func (s *Store) deltaPath(root string) string {
	return strings.TrimSuffix(s.cachePath(root), ".gob") + ".delta.gob"
}

// maxDelta is how many entries the delta gathers before the cache is
// written whole again: a run adds a few, and a tree's cache can hold
// hundreds of thousands.
const maxDelta = 4096

// addToCache remembers add in root's stat cache: in its delta, or, once
// that is large, by writing full() as the whole cache.
func (s *Store) addToCache(root string, add map[string]cached, full func() map[string]cached) error {
	delta := s.loadCacheFile(s.deltaPath(root))
	for rel, c := range add {
		delta[rel] = c
	}
	if len(delta) <= maxDelta {
		return s.writeCache(s.deltaPath(root), delta)
	}
	if err := s.writeCache(s.cachePath(root), full()); err != nil {
		return err
	}
	return os.Remove(s.deltaPath(root))
}

func (s *Store) loadCacheFile(path string) map[string]cached {
	data, err := os.ReadFile(path)
	if err != nil {
		return map[string]cached{}
	}
	var m map[string]cached
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&m) != nil || m == nil {
		return map[string]cached{}
	}
	return m
}

func (s *Store) writeCache(path string, m map[string]cached) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(m); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// Usage is the store's size on disk, in bytes, and its number of blobs.
func (s *Store) Usage() (bytes int64, blobs int) {
	filepath.WalkDir(filepath.Join(s.dir, "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
				blobs++
			}
		}
		return nil
	})
	return bytes, blobs
}

// Sweep removes the blobs that neither keep nor a stat cache names (the
// stat caches name the content the next snapshot counts on) and that are
// older than grace (a run in progress may have stored them and not yet
// recorded them). It returns the bytes freed.
func (s *Store) Sweep(keep map[string]bool, grace time.Duration) int64 {
	caches, _ := os.ReadDir(filepath.Join(s.dir, "stat"))
	for _, c := range caches {
		for _, e := range s.loadCacheFile(filepath.Join(s.dir, "stat", c.Name())) {
			keep[e.Sum] = true
		}
	}
	var freed int64
	cutoff := time.Now().Add(-grace)
	dirs, _ := os.ReadDir(filepath.Join(s.dir, "blobs"))
	for _, d := range dirs {
		sub := filepath.Join(s.dir, "blobs", d.Name())
		files, _ := os.ReadDir(sub)
		for _, f := range files {
			if keep[d.Name()+f.Name()] {
				continue
			}
			fi, err := f.Info()
			if err != nil || fi.ModTime().After(cutoff) {
				continue
			}
			if os.Remove(filepath.Join(sub, f.Name())) == nil {
				freed += fi.Size()
			}
		}
	}
	return freed
}

// Clear removes everything the store holds.
func (s *Store) Clear() error { return os.RemoveAll(s.dir) }

// writeFileAtomic writes data to path through a temporary file and a rename,
// so that a reader never sees part of it.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// GitOID is the name git gives a blob of data, with a hash of hashLen
// bytes (20: SHA-1, 32: SHA-256).
func GitOID(data []byte, hashLen int) string {
	h := sha1.New()
	if hashLen == sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// GitObjects reads blobs from a repository's object store, read-only, with
// one `git cat-file --batch`: the user's configuration is not read, no
// hook or filter runs, nothing is written. An object that is missing, or
// whose content does not hash to its name, is left out of the answer.
func GitObjects(gitDir string, oids []string) (map[string][]byte, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	sort.Strings(oids)
	cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "--batch")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1")
	cmd.Stdin = strings.NewReader(strings.Join(oids, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("read committed content from %s with git cat-file: %v %s", gitDir, err, strings.TrimSpace(stderr.String()))
	}
	objs := make(map[string][]byte, len(oids))
	for _, oid := range oids {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			return nil, errors.New("git cat-file: short answer")
		}
		header := strings.Fields(string(out[:nl]))
		out = out[nl+1:]
		if len(header) == 2 && header[1] == "missing" {
			continue
		}
		if len(header) != 3 || header[0] != oid || header[1] != "blob" {
			return nil, fmt.Errorf("git cat-file: unexpected answer %q for %s", strings.Join(header, " "), oid)
		}
		size, err := strconv.Atoi(header[2])
		if err != nil || size+1 > len(out) {
			return nil, fmt.Errorf("git cat-file: bad size for %s", oid)
		}
		if data := out[:size:size]; GitOID(data, len(oid)/2) == oid {
			objs[oid] = data
		}
		out = out[size+1:]
	}
	return objs, nil
}
