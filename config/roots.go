package config

import (
	"errors"
	"io/fs"
	"os"
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
