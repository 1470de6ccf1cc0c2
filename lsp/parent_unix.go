//go:build unix

package lsp

import (
	"errors"
	"syscall"
	"time"
)

// parentCheckInterval is how often the server checks that the editor that
// started it (initialize's processId) is still alive.
const parentCheckInterval = 2 * time.Second

// watchParent ends the connection when process pid is gone, as LSP asks: an
// editor killed hard may leave warden's stdin open (held by another process),
// and a server without its editor must not keep running agent jobs.
func (s *Server) watchParent(pid int) {
	if pid <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(parentCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-s.connCtx.Done():
				return
			case <-t.C:
			}
			// Signal 0 checks existence; EPERM means it exists but is not ours.
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				s.log.Warn("the editor process is gone; stopping", "pid", pid)
				s.cancelConn()
				return
			}
		}
	}()
}
