//go:build !linux

package protect

// The index of the roots' protected entries is Linux's (fanotify): other
// systems scan.
func indexFound(string, []string) ([]string, uint64, bool) { return nil, 0, false }

func indexCreated(string, []string, uint64) ([]string, bool) { return nil, false }
