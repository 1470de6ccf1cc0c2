//go:build linux

package linux

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	hasX32    = true
	// clone(flags, stack, parent_tid, child_tid, tls): flags is args[0].
	cloneFlagsOffset = offArg0
)

var archDeniedSyscalls = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_MODIFY_LDT}
