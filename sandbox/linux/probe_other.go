//go:build !linux

package linux

import "runtime"

// KernelInfo is what the running kernel offers the sandbox.
type KernelInfo struct {
	OS             string `json:"os"`
	Kernel         string `json:"kernel"`
	LandlockABI    int    `json:"landlock_abi"`
	LandlockErrata int    `json:"landlock_errata"`
	Seccomp        bool   `json:"seccomp"`
	NoNewPrivs     bool   `json:"no_new_privs"`
	Root           bool   `json:"root"`
}

// Probe reports the system; only Linux has the features it lists.
func Probe() KernelInfo { return KernelInfo{OS: runtime.GOOS} }

// ProbeNamespaces reports that no Linux namespaces exist here.
func ProbeNamespaces(string) map[string]string {
	return map[string]string{"user": "not Linux", "mount": "not Linux", "pid": "not Linux", "net": "not Linux", "ipc": "not Linux"}
}
