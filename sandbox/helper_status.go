package sandbox

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"sync"
)

// helperStatus reads the helper's status pipe. The helper says "idle" once
// it waits for its spec, "ready" once the command started or "error MSG"
// when set-up failed (nothing ran), and at the end "signal N" when a signal
// killed the command and "exit CODE" once the command and everything it
// started are gone. A helper that dies says nothing more: end of file.
type helperStatus struct {
	r  io.Closer
	br *bufio.Reader
	// silent says the helper died before saying "ready" or "error".
	silent bool

	mu       sync.Mutex
	signal   int
	code     int
	exited   bool // "exit CODE" arrived
	finished chan struct{}
}

func newHelperStatus(r io.ReadCloser) *helperStatus {
	return &helperStatus{r: r, br: bufio.NewReader(r), finished: make(chan struct{})}
}

// waitIdle reads the helper's first line, which must be "idle".
func (s *helperStatus) waitIdle() error {
	line, err := s.br.ReadString('\n')
	return s.expect("idle", line, err)
}

// waitReady reads up to "ready" (past "idle"), then follows the rest of the
// pipe in the background. Any other outcome is a *RefusedError: the command
// did not start.
func (s *helperStatus) waitReady() error {
	for {
		line, err := s.br.ReadString('\n')
		if strings.TrimSpace(line) == "idle" && err == nil {
			continue
		}
		if err := s.expect("ready", line, err); err != nil {
			s.r.Close()
			return err
		}
		go s.follow()
		return nil
	}
}

func (s *helperStatus) expect(want, line string, err error) error {
	line = strings.TrimSpace(line)
	switch {
	case line == want && err == nil:
		return nil
	case strings.HasPrefix(line, "error "):
		return refuse("%s", strings.TrimPrefix(line, "error "))
	case err != nil:
		s.silent = line == ""
		return refuse("the sandbox helper died before starting the command (%v)", err)
	}
	return refuse("the sandbox helper said %q", line)
}

func (s *helperStatus) follow() {
	defer close(s.finished)
	defer s.r.Close()
	for {
		line, err := s.br.ReadString('\n')
		word, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		if v, convErr := strconv.Atoi(arg); convErr == nil {
			s.mu.Lock()
			switch word {
			case "signal":
				s.signal = v
			case "exit":
				s.code, s.exited = v, true
			}
			done := s.exited
			s.mu.Unlock()
			if done {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// final waits for the end of the pipe and returns the command's status as
// the helper reported it; ok is false when the helper died without saying.
func (s *helperStatus) final() (code, signal int, ok bool) {
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code, s.signal, s.exited
}
