package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is Read's error for a file over its bound.
var ErrTooLarge = errors.New("too large")

// Open opens path, links followed, for reading when it is a regular file
// or the null device (GIT_CONFIG_GLOBAL=/dev/null is how one runs git
// without the user's config). A missing file's error satisfies
// os.IsNotExist.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() && !isDevNull(st) {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// Read reads the file Open takes, of at most max bytes (ErrTooLarge,
// wrapped, beyond).
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over %d bytes: %w", path, max, ErrTooLarge)
	}
	return data, nil
}

func isDevNull(st os.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(st, null)
}
