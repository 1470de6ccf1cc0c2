package protect

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// stateDir is Warden's state directory (the quarantine directory's parent),
// resolved through the links of its existing part; "" when there is none.
func stateDir() string {
	q := QuarantineDir()
	if q == "" {
		return ""
	}
	return pathmemo.ResolveExisting(filepath.Dir(q))
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

// QuarantineDir is where moved-away paths are kept when the policy names no
// place: quarantine under Warden's state directory ($XDG_STATE_HOME/warden,
// default ~/.local/state/warden, as config.StateDir), which is a protected
// path itself. Empty when there is no home directory.
func QuarantineDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "warden", "quarantine")
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Join(h, ".local", "state", "warden", "quarantine")
	}
	return ""
}
