//go:build linux

package linux

import "golang.org/x/sys/unix"

const (
	auditArch        = unix.AUDIT_ARCH_AARCH64
	hasX32           = false
	cloneFlagsOffset = offArg0
)

var archDeniedSyscalls []uintptr

// recordedCalls: arm64 has only the *at calls.
func recordedCalls() map[int]recordedCall { return atCalls() }
