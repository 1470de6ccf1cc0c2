//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// lookPath resolves argv0 the way execvp would, against the child's PATH.
func lookPath(argv0, cwd, pathEnv string) (string, error) {
	if strings.Contains(argv0, "/") {
		full := argv0
		if !filepath.IsAbs(full) {
			full = filepath.Join(cwd, full)
		}
		if err := executable(full); err != nil {
			return "", err
		}
		return full, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		full := filepath.Join(dir, argv0)
		if executable(full) == nil {
			return full, nil
		}
	}
	return "", errors.New("command not found")
}

func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return errors.New("no such file")
	}
	if st.IsDir() {
		return errors.New("is a directory")
	}
	if st.Mode()&0o111 == 0 {
		return errors.New("permission denied (not executable)")
	}
	return nil
}
