package netproxy

import (
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// spliceRelay is the upper bound for any user-space relay on Linux: each
// direction is one loop of splice(2) from the socket into a 1 MiB pipe and
// from the pipe into the other socket, waiting on Go's poller, with no
// protocol, no counting and none of io.Copy's machinery.
func spliceRelay(b *testing.B, target string) (string, func()) {
	return testRelay(b, target, splicePipe)
}

func splicePipe(dst, src *net.TCPConn) {
	defer dst.CloseWrite()
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	size, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETPIPE_SZ, 1<<20)
	if err != nil {
		return
	}
	in, err1 := src.SyscallConn()
	out, err2 := dst.SyscallConn()
	if err1 != nil || err2 != nil {
		return
	}
	for {
		var n int64
		var serr error
		if err := in.Read(func(fd uintptr) bool {
			n, serr = unix.Splice(int(fd), nil, p[1], nil, size, unix.SPLICE_F_NONBLOCK)
			return serr != unix.EAGAIN
		}); err != nil || serr != nil || n == 0 {
			return
		}
		for n > 0 {
			var m int64
			if err := out.Write(func(fd uintptr) bool {
				m, serr = unix.Splice(p[0], nil, int(fd), nil, int(n), unix.SPLICE_F_NONBLOCK)
				return serr != unix.EAGAIN
			}); err != nil || serr != nil {
				return
			}
			n -= m
		}
	}
}

// processCPU is the CPU time (user and system) this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
