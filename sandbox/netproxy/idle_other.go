//go:build !unix

package netproxy

import "net"

// connIdle cannot peek without blocking here; a dead kept-alive upstream
// shows as a 502 for that request instead.
func connIdle(net.Conn) bool { return true }
