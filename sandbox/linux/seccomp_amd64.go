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

// recordedCalls adds x86_64's calls without a directory argument.
func recordedCalls() map[int]recordedCall {
	calls := atCalls()
	calls[unix.SYS_OPEN] = recordedCall{writeFlags: 1, flags: 1, fd: -1, paths: []pathArg{content(-1, 0, openFollow)}}
	calls[unix.SYS_CREAT] = onPaths(-1, content(-1, 0, follow))
	calls[unix.SYS_UNLINK] = onPaths(-1, entry(-1, 0, noFollow))
	calls[unix.SYS_RMDIR] = onPaths(-1, entry(-1, 0, noFollow))
	calls[unix.SYS_RENAME] = onPaths(-1, moved(-1, 0), moved(-1, 1))
	calls[unix.SYS_MKDIR] = onPaths(-1, entry(-1, 0, noFollow))
	calls[unix.SYS_MKNOD] = onPaths(-1, entry(-1, 0, noFollow))
	calls[unix.SYS_SYMLINK] = onPaths(-1, entry(-1, 1, noFollow))
	calls[unix.SYS_LINK] = onPaths(-1, entry(-1, 0, noFollow), entry(-1, 1, noFollow))
	calls[unix.SYS_CHMOD] = onPaths(-1, content(-1, 0, follow))
	return calls
}
