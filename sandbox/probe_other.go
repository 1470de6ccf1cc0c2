//go:build !linux

package sandbox

import "runtime"

// KernelInfo is what the running kernel offers the sandbox.
type KernelInfo struct {
	OS, Kernel     string
	LandlockABI    int
	LandlockErrata int
	Seccomp        bool
	NoNewPrivs     bool
	Root           bool
}

// Probe reports the system; only Linux has the features it lists.
func Probe() KernelInfo { return KernelInfo{OS: runtime.GOOS} }

// ProbeNamespaces reports that no Linux namespaces exist here.
func ProbeNamespaces(string) map[string]string {
	return map[string]string{"user": "not Linux", "mount": "not Linux", "pid": "not Linux", "net": "not Linux", "ipc": "not Linux"}
}
