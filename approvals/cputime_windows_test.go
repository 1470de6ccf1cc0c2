package approvals

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the process's user+system CPU time (see cputime_unix_test.go).
func cpuTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user)
	return filetimeDuration(kernel) + filetimeDuration(user)
}

// filetimeDuration reads a FILETIME that holds a duration in 100 ns units.
func filetimeDuration(f windows.Filetime) time.Duration {
	return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
}
