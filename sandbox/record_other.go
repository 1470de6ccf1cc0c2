//go:build !linux

package sandbox

// RecordsWrites reports whether a run under p can have its changes
// reported as they happen: only Linux's seccomp supervisor can.
func RecordsWrites(p Policy) bool { return false }
