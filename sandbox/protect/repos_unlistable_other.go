//go:build !unix

package protect

// unlistable: no file modes to hide a directory with.
func unlistable(root, dir string, err error) (string, bool) { return "", false }

// unsearchableHold: no file modes to hide an entry with.
func unsearchableHold(root, p string) (string, bool) { return "", false }
