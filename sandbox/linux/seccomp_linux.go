package linux

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in every sandboxed mode: they reach other
// processes (ptrace, process_vm_*), the kernel's attack surface (bpf,
// perf_event_open, userfaultfd, keyrings), the mount table and namespaces
// (escape routes the mount view relies on), or the machine itself. io_uring
// is here because its operations (socket, connect, openat) bypass every
// other filter rule.
var deniedSyscalls = append([]uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	unix.SYS_PROCESS_MADVISE,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_CHROOT,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
	unix.SYS_DELETE_MODULE, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT,
	unix.SYS_SYSLOG, unix.SYS_QUOTACTL, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_VHANGUP, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_FANOTIFY_INIT,
}, archDeniedSyscalls...)

// namespaceCloneFlags may not be passed to clone: a nested user namespace
// would hand the command fresh capabilities.
const namespaceCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// Terminal ioctls that push input into a terminal another process reads.
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// seccomp_data offsets.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on little-endian machines
	offArg1 = 24
	offArg4 = 48
)

// filterOptions choose the filter's socket rules.
type filterOptions struct {
	// network on lets the command create sockets of every family but
	// vsock; ask adds TCP (for the loopback forwarder); off allows only
	// AF_UNIX sockets.
	network Network
	// mediateUnix sends connect, sendto with an address, sendmsg and
	// sendmmsg to the helper's supervisor (unixmediate_linux.go), which
	// performs them for the command.
	mediateUnix bool
	// recordWrites sends every call that can change a file tree by name
	// (recordcalls_linux.go) to the supervisor, which reports the paths to
	// the launcher before the call goes on (recordwrites_linux.go).
	recordWrites bool
}

// seccompFilter assembles the filter: wrong architecture (an i386 int 0x80
// on x86_64) kills the process; x32 numbers, the denied syscalls, socket
// families other than AF_UNIX (when the network is off), namespace flags to
// clone, clone3 (ENOSYS, so libcs fall back to clone, whose flags are
// visible), TIOCSTI/TIOCLINUX and unusual personalities return an error;
// with mediation, the calls that name a socket address go to the
// supervisor; everything else is allowed.
func seccompFilter(opts filterOptions) ([]bpf.RawInstruction, error) {
	if auditArch == 0 {
		return nil, fmt.Errorf("no seccomp filter for %s: the sandbox supports amd64 and arm64", runtime.GOARCH)
	}
	a := &asm{}
	eperm := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	enosys := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}
	allow := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}

	a.add(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.jeq(auditArch, "", "kill")
	a.add(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if hasX32 {
		a.jge(0x40000000, "eperm", "")
	}
	for _, nr := range deniedSyscalls {
		a.jeq(uint32(nr), "eperm", "")
	}
	a.jeq(uint32(unix.SYS_CLONE3), "enosys", "")
	a.jeq(uint32(unix.SYS_CLONE), "clone", "")
	a.jeq(uint32(unix.SYS_IOCTL), "ioctl", "")
	a.jeq(uint32(unix.SYS_PERSONALITY), "personality", "")
	a.jeq(uint32(unix.SYS_SOCKET), "socket", "")
	a.jeq(uint32(unix.SYS_SOCKETPAIR), "socket", "")
	if opts.mediateUnix {
		a.jeq(uint32(unix.SYS_CONNECT), "notify", "")
		a.jeq(uint32(unix.SYS_SENDMSG), "notify", "")
		a.jeq(uint32(unix.SYS_SENDTO), "sendto", "")
		a.jeq(uint32(unix.SYS_SENDMMSG), "notify", "")
	}
	var opens []int // the argument holding each open call's flags
	if opts.recordWrites {
		calls := recordedCalls()
		for _, nr := range sortedCalls(calls) {
			c := calls[nr]
			if c.writeFlags < 0 {
				a.jeq(uint32(nr), "notify", "")
				continue
			}
			a.jeq(uint32(nr), fmt.Sprintf("open%d", c.writeFlags), "")
			if !slices.Contains(opens, c.writeFlags) {
				opens = append(opens, c.writeFlags)
			}
		}
	}
	a.add(allow)

	// An open that can only read goes on; one that can write or create is
	// recorded.
	for _, arg := range opens {
		a.label(fmt.Sprintf("open%d", arg))
		a.add(bpf.LoadAbsolute{Off: uint32(offArg0 + 8*arg), Size: 4})
		a.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: openWriteFlags, SkipFalse: 1})
		a.add(bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF})
		a.add(allow)
	}

	a.label("clone")
	a.add(bpf.LoadAbsolute{Off: cloneFlagsOffset, Size: 4})
	a.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: namespaceCloneFlags, SkipTrue: 1})
	a.add(allow)
	a.add(eperm)

	a.label("ioctl")
	a.add(bpf.LoadAbsolute{Off: offArg1, Size: 4})
	a.jeq(ioctlTIOCSTI, "eperm", "")
	a.jeq(ioctlTIOCLINUX, "eperm", "")
	a.add(allow)

	a.label("personality")
	a.add(bpf.LoadAbsolute{Off: offArg0, Size: 4})
	for _, v := range []uint32{0, 0x0008, 0x20000, 0x20008, 0xffffffff} { // PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE, query
		a.jeq(v, "allow", "")
	}
	a.add(eperm)

	a.label("socket")
	a.add(bpf.LoadAbsolute{Off: offArg0, Size: 4})
	switch opts.network {
	case NetworkOn:
		a.jeq(unix.AF_VSOCK, "eperm", "allow")
	case NetworkAsk:
		askSockets(a)
	default:
		a.jeq(unix.AF_UNIX, "allow", "eperm")
	}

	if opts.mediateUnix {
		// sendto without an address (send) is decided by its registers,
		// which the command cannot change once trapped: allowed here.
		a.label("sendto")
		a.add(bpf.LoadAbsolute{Off: offArg4, Size: 4})
		a.jeq(0, "", "notify")
		a.add(bpf.LoadAbsolute{Off: offArg4 + 4, Size: 4})
		a.jeq(0, "allow", "notify")
	}
	if opts.mediateUnix || opts.recordWrites {
		a.label("notify")
		a.add(bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF})
	}

	a.label("allow")
	a.add(allow)
	a.label("eperm")
	a.add(eperm)
	a.label("enosys")
	a.add(enosys)
	a.label("kill")
	a.add(bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS})
	prog, err := a.assemble()
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(prog)
}

// seccompProgram is the filter in the kernel's form.
func seccompProgram(opts filterOptions) ([]unix.SockFilter, error) {
	raw, err := seccompFilter(opts)
	if err != nil {
		return nil, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return filter, nil
}

// installSeccomp loads the filter on every thread of the helper (TSYNC); the
// command inherits it across fork and exec.
func installSeccomp(filter []unix.SockFilter) error {
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r1, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("install filter: %w", errno)
	}
	if r1 != 0 {
		return fmt.Errorf("install filter: thread %d could not be synchronised", r1)
	}
	return nil
}

// installSeccompListener loads a mediating filter on the calling thread
// only, which must be the locked thread that forks the command, and returns
// its notification descriptor (close-on-exec). The helper's other threads
// stay unfiltered: the supervisor runs there and performs the trapped calls
// (a filtered supervisor would trap on its own connect). They hold nothing
// the command can reach: the helper is not dumpable and ptrace is denied.
func installSeccompListener(filter []unix.SockFilter) (int, error) {
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// WAIT_KILLABLE_RECV (5.19): once the supervisor has a call, a signal
	// no longer interrupts the command's wait, so a connect the supervisor
	// performed is never reported as interrupted.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno == unix.EINVAL {
		fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	}
	runtime.KeepAlive(filter)
	if errno != 0 {
		return -1, fmt.Errorf("install filter with a listener: %w", errno)
	}
	return int(fd), nil
}

// asm is a tiny assembler with named jump targets, so the filter reads as
// a list of decisions rather than hand-counted skips.
type asm struct {
	ins    []bpf.Instruction
	jumps  map[int][2]string // instruction index -> true/false targets ("" = next)
	labels map[string]int
}

func (a *asm) add(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) jump(cond bpf.JumpTest, val uint32, t, f string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.ins)] = [2]string{t, f}
	a.add(bpf.JumpIf{Cond: cond, Val: val})
}

func (a *asm) jeq(val uint32, t, f string) { a.jump(bpf.JumpEqual, val, t, f) }
func (a *asm) jge(val uint32, t, f string) { a.jump(bpf.JumpGreaterOrEqual, val, t, f) }

func (a *asm) assemble() ([]bpf.Instruction, error) {
	out := append([]bpf.Instruction(nil), a.ins...)
	for i, targets := range a.jumps {
		j := out[i].(bpf.JumpIf)
		for k, name := range targets {
			skip := 0
			if name != "" {
				at, ok := a.labels[name]
				if !ok {
					return nil, fmt.Errorf("seccomp: unknown label %q", name)
				}
				skip = at - i - 1
				if skip < 0 || skip > 255 {
					return nil, fmt.Errorf("seccomp: jump to %q out of range (%d)", name, skip)
				}
			}
			if k == 0 {
				j.SkipTrue = uint8(skip)
			} else {
				j.SkipFalse = uint8(skip)
			}
		}
		out[i] = j
	}
	return out, nil
}
