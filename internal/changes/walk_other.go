//go:build !linux && !darwin

package changes

import (
	"os"
	"path/filepath"
)

// readDir lists dir's entries: the subdirectories by name, and each other
// entry's Entry.
func readDir(dir string) (subdirs []string, files map[string]Entry, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	files = make(map[string]Entry, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			subdirs = append(subdirs, e.Name())
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
			files[e.Name()] = entryOf(fi)
		}
	}
	return subdirs, files, nil
}
