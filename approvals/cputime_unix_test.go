//go:build unix

package approvals

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. On a shared, loaded
// machine wall time includes waiting for a core; CPU time is the work done.
// The budget metrics use the smaller of the two.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
