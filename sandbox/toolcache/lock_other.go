//go:build !unix

package toolcache

import (
	"errors"
	"os"
)

func tryLock(string) (*os.File, bool, error) {
	return nil, false, errors.New("toolchain cache layers need a unix system")
}

func unlock(f *os.File) { f.Close() }
