package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// stateDir is Warden's state directory (the quarantine directory's parent),
// resolved through the links of its existing part; "" when there is none.
func stateDir() string {
	q := QuarantineDir()
	if q == "" {
		return ""
	}
	return resolveExisting(filepath.Dir(q))
}

var replaceSeq atomic.Uint64

// replaceFile writes b to a new file renamed over path, so a reader sees
// the old content or the new, never part of one. It reports whether the
// file was written: callers keep what failed to write for their next save.
func replaceFile(path string, b []byte) bool { return writeReplacing(path, b, 0o600) == nil }

// writeReplacing is replaceFile with the new file's mode, saying what
// failed. A link at path is replaced, not followed.
func writeReplacing(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(replaceSeq.Add(1), 10)
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
