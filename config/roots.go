package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WritableRoots splits writable_roots into the entries to use and those
// that do not exist. As in Codex, a configured root that is missing (made
// later, or named for another machine) is skipped with a note rather than
// refusing every command; a root typed on the command line stays an error.
func WritableRoots(cfg Config) (roots, missing []string) {
	expanded := ExpandHome(cfg.WritableRoots)
	for i, r := range cfg.WritableRoots {
		if _, err := os.Stat(expanded[i]); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, r)
			continue
		}
		roots = append(roots, r)
	}
	return roots, missing
}

// checkHomeEntry checks one home_writable entry: relative to the home
// directory (a leading ~/ is allowed), below it, without "..".
func checkHomeEntry(e string) error {
	s := strings.TrimPrefix(strings.TrimSpace(e), "~/")
	switch {
	case filepath.IsAbs(s):
		return fmt.Errorf("home_writable %q: write it relative to the home directory, such as .npm or .cache/foo", e)
	case slices.Contains(strings.Split(filepath.ToSlash(s), "/"), ".."):
		return fmt.Errorf("home_writable %q: must not hold \"..\"", e)
	case s == "" || s == "~" || filepath.Clean(s) == ".":
		return fmt.Errorf("home_writable %q: name an entry of the home directory, such as .npm or .cache/foo, not the home directory itself", e)
	}
	return nil
}
