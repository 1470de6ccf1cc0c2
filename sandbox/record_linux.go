package sandbox

import (
	"bytes"
	"fmt"
	"os"

	"github.com/wardenhq/warden/sandbox/linux"
	"golang.org/x/sys/unix"
)

// RecordsWrites reports whether a run under p can have its changes
// reported as they happen (Command.Record): a sandboxed run, on a kernel
// whose seccomp filter can send calls to the helper's supervisor.
func RecordsWrites(p Policy) bool {
	return p.Sandboxed() && linux.Probe().Seccomp && linux.RecordSupported()
}

// recordPair is the record socket: the launcher's end and the helper's.
func recordPair() (launcher, helper *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox helper record socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "record"), os.NewFile(uintptr(fds[1]), "record-helper"), nil
}

// serveRecord answers the helper's reports until it closes its end: each
// path goes to rec.Before, then the helper hears that it may go on.
func serveRecord(conn *os.File, rec *WriteRecord) {
	defer conn.Close()
	buf := make([]byte, linux.RecordMessageMax)
	for {
		n, err := conn.Read(buf)
		if err != nil || n == 0 {
			return
		}
		answer := false // a report of new paths only goes unanswered
		for _, item := range bytes.Split(buf[:n], []byte{0}) {
			if len(item) < 2 {
				continue
			}
			how := ChangeEntry
			switch item[0] {
			case linux.IntentTree:
				how = ChangeTree
			case linux.IntentLinked:
				how = ChangeLinked
			case linux.IntentNew:
				how = ChangeNew
			}
			answer = answer || how != ChangeNew
			rec.Before(string(item[1:]), how)
		}
		if !answer {
			continue
		}
		if _, err := conn.Write([]byte{linux.RecordAck}); err != nil {
			return
		}
	}
}

// serveRecord hands the helper's record socket to the run's record, or
// closes it when the run records nothing.
func (p *Process) serveRecord(h *helperProc) {
	conn := h.record
	h.record = nil
	if p.record == nil {
		conn.Close()
		return
	}
	done := make(chan struct{})
	p.recordDone = done
	go func() {
		defer close(done)
		serveRecord(conn, p.record)
	}()
}
