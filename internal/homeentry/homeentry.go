package homeentry

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Clean checks one home_writable entry: a path relative to the home
// directory ("~/" in front is taken off), without "..", naming something
// below it. It returns the entry cleaned.
func Clean(e string) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(e), "~/")
	if s == "" || s == "~" {
		return "", fmt.Errorf("home_writable %q: name an entry of the home directory (such as .npm or .cache/foo), not the home directory itself", e)
	}
	if filepath.IsAbs(s) {
		return "", fmt.Errorf("home_writable %q: must be relative to the home directory (such as .npm or .cache/foo)", e)
	}
	for _, part := range strings.Split(filepath.ToSlash(s), "/") {
		if part == ".." {
			return "", fmt.Errorf("home_writable %q: must not hold \"..\"", e)
		}
	}
	c := filepath.Clean(s)
	if c == "." {
		return "", fmt.Errorf("home_writable %q: name an entry of the home directory, not the home directory itself", e)
	}
	return c, nil
}
