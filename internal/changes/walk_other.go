//go:build !linux && !darwin

package changes

import (
	"os"
	"path/filepath"
)

// readDir lists dir's entries: the subdirectories by name and mode, and
// each other entry's Entry.
func readDir(dir string, file func(name string, e Entry)) (subdirs []subdir, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		switch {
		case err != nil:
		case fi.IsDir():
			subdirs = append(subdirs, subdir{e.Name(), fi.Mode()})
		default:
			file(e.Name(), entryOf(fi))
		}
	}
	return subdirs, nil
}
