package pathutil

import (
	"path/filepath"
	"strings"
)

// Within reports whether p is dir or below it (both clean and absolute).
func Within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// WithinAny reports whether p is one of dirs or below one.
func WithinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if Within(d, p) {
			return true
		}
	}
	return false
}
