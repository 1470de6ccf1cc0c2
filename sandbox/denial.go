package sandbox

import (
	"bytes"
	"fmt"
)

// denialMarkers are what tools print when the kernel refuses them something
// the sandbox took away (lower-case; output is lowered before matching).
var denialMarkers = []string{
	"operation not permitted",
	"permission denied",
	"read-only file system",
	"seccomp",
	"sandbox",
	"landlock",
	"failed to write file",
	"network is unreachable",
	"cannot assign requested address",
	"temporary failure in name resolution",
}

// detectDenial guesses whether a failed command failed because of the
// sandbox, following Codex: success is never a denial; a denial marker in the
// output is; otherwise exit codes 2, 126 and 127 (usage errors, not
// executable, not found) are not; a death by SIGSYS is.
func detectDenial(sandboxed bool, exitCode int, signal int, output ...[]byte) (bool, string) {
	if !sandboxed || (exitCode == 0 && signal == 0) {
		return false, ""
	}
	for _, out := range output {
		low := bytes.ToLower(out)
		for _, m := range denialMarkers {
			if bytes.Contains(low, []byte(m)) {
				return true, fmt.Sprintf("output says %q", m)
			}
		}
	}
	switch exitCode {
	case 2, 126, 127:
		return false, ""
	}
	if signal == 31 { // SIGSYS: a seccomp kill
		return true, "killed by SIGSYS (seccomp)"
	}
	return false, ""
}
