//go:build unix

package protect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// unlistable says what to hold read-only for dir, which the scan could not
// list (err): a command of an earlier run may have made it unreadable
// (chmod 000) to hide the .git below it from this scan, and would make it
// readable again once running. So a directory of the user's that cannot be
// read is held read-only as a whole (its mode cannot be changed back), or
// its parent when the parent cannot be searched (the directory cannot be
// reached to be held). One of another user's the command cannot change
// either: skipped, as any entry that is gone.
func unlistable(root, dir string, err error) (string, bool) {
	if !errors.Is(err, fs.ErrPermission) {
		return "", false
	}
	if parent := filepath.Dir(dir); dir != root && unix.Access(parent, unix.X_OK) != nil {
		dir = parent
	}
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil || st.Uid != uint32(os.Getuid()) {
		return "", false
	}
	return dir, true
}

// unsearchableHold says what to hold read-only for p, an entry the scan listed
// in a directory it cannot search (mode 600): p cannot be reached to be
// held, so its directory is held instead, as by unlistable.
func unsearchableHold(root, p string) (string, bool) {
	if unix.Access(filepath.Dir(p), unix.X_OK) == nil {
		return "", false
	}
	return unlistable(root, p, fs.ErrPermission)
}
