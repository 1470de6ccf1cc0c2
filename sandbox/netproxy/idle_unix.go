//go:build unix

package netproxy

import (
	"errors"
	"net"
	"syscall"
)

// connIdle reports whether c is open with nothing to read, without
// blocking: a peer that closed a kept-alive connection shows as EOF.
// Connections that are not sockets count as idle.
func connIdle(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	idle := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		idle = errors.Is(err, syscall.EAGAIN)
		return true
	})
	return err == nil && idle
}
