//go:build !linux && !darwin

package changes

import "io/fs"

// Elsewhere (Windows) FileInfo has no inode change time: size and mtime decide.
func sysStat(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }

// nlinkOf: hard links are not followed here.
func nlinkOf(fs.FileInfo) uint64 { return 1 }

func inodeOf(string) (uint64, bool) { return 0, false }
