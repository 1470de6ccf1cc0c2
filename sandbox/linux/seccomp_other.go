//go:build linux && !amd64 && !arm64

package linux

// Other architectures have no filter yet: the helper refuses to run.
const (
	auditArch        = 0
	hasX32           = false
	cloneFlagsOffset = offArg0
)

var archDeniedSyscalls []uintptr
