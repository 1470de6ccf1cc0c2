package risk

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// CountTree counts the files (everything but directories) under root and
// their total size, without following symlinks, stopping once limit files
// are seen or budget has passed. complete is false when it stopped early or
// could not read a directory, so the counts are a lower bound.
//
// Directories are read in parallel and each entry is stat'ed relative to its
// open directory (fstatat), which keeps a 10,000-file tree in milliseconds.
func CountTree(root string, limit int64, budget time.Duration) (files, bytes int64, complete bool) {
	info, err := os.Lstat(root)
	if err != nil {
		return 0, 0, false
	}
	if !info.IsDir() {
		return 1, info.Size(), true
	}
	c := &treeCounter{limit: limit, deadline: time.Now().Add(budget)}
	c.sem = make(chan struct{}, 4)
	c.wg.Add(1)
	c.dir(root)
	c.wg.Wait()
	return c.files.Load(), c.bytes.Load(), !c.incomplete.Load()
}

type treeCounter struct {
	limit        int64
	deadline     time.Time
	files, bytes atomic.Int64
	incomplete   atomic.Bool
	sem          chan struct{}
	wg           sync.WaitGroup
}

func (c *treeCounter) dir(path string) {
	defer c.wg.Done()
	if c.files.Load() >= c.limit || time.Now().After(c.deadline) {
		c.incomplete.Store(true)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		c.incomplete.Store(true)
		return
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		c.incomplete.Store(true)
	}
	var files, bytes int64
	for _, name := range names {
		isDir, size, err := lstatAt(f, path, name)
		if err != nil {
			c.incomplete.Store(true)
			continue
		}
		if isDir {
			sub := filepath.Join(path, name)
			c.wg.Add(1)
			select {
			case c.sem <- struct{}{}:
				go func() {
					c.dir(sub)
					<-c.sem
				}()
			default:
				c.dir(sub)
			}
			continue
		}
		files++
		bytes += size
	}
	c.files.Add(files)
	c.bytes.Add(bytes)
}
