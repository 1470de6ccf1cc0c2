//go:build windows

package patch

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// On Windows the files go through the os package: its Rename is
// MoveFileEx(MOVEFILE_REPLACE_EXISTING), the atomic replace a commit needs,
// where syscall.Rename (MoveFile) refuses an existing target.

func rename(from, to string) error { return os.Rename(from, to) }

// stage writes content to a new temporary file in dir and returns its name.
func stage(dir, base, content string, mode fs.FileMode) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".warden-"+strconv.FormatUint(uint64(rand.Uint32()), 36))
		err := stageAs(name, content, mode, false)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return name, err
	}
}

// stageAs writes content to the new file name (which must not exist),
// flushed to the disk when durable is set. Windows applies no umask and
// keeps only the read-only bit of mode.
func stageAs(name, content string, mode fs.FileMode, durable bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	var serr error
	if durable && werr == nil {
		serr = f.Sync()
	}
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(name)
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// readFile reads a whole file.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
