//go:build !unix

package sandbox

// unlistable: no file modes to hide a directory with.
func unlistable(root, dir string, err error) (string, bool) { return "", false }
