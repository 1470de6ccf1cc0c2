package guard

import "time"

// Seams for the tests that drive the guard through real sandboxed runs (the
// sandbox package's): they change the timing and the watch mechanism, never
// what is kept.

// DelayArmForTest delays each guard's watches by d (0: none).
func DelayArmForTest(d time.Duration) { slowArmForTest = d }

// InotifyOnlyForTest makes every new watch inotify's, not fanotify's.
func InotifyOnlyForTest(on bool) { noFanotifyForTest = on }
