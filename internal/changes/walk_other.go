//go:build !linux && !darwin

package changes

import (
	"os"
	"path/filepath"
)

// readDir lists dir's entries: the subdirectories by name, and each other
// entry's Entry.
func readDir(dir string, file func(name string, e Entry)) (subdirs []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			subdirs = append(subdirs, e.Name())
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
			file(e.Name(), entryOf(fi))
		}
	}
	return subdirs, nil
}
