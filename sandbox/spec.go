package sandbox

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"sync"
)

// HelperArg is argv[1] of the hidden sandbox helper: `warden HelperArg`,
// with the spec as JSON on fd 4 and the status pipe on fd 3. cmd/warden
// hands such a process to HelperMain before anything else runs.
const HelperArg = "__sandbox-helper"

// Layers the helper applies, in the spec and in what doctor reports.
type layers struct {
	Namespaces bool `json:"ns,omitempty"`       // user, mount, pid, ipc (+ net when off) namespaces and the mount view
	Landlock   bool `json:"landlock,omitempty"` // filesystem, TCP and scope rules
	Seccomp    bool `json:"seccomp,omitempty"`  // the syscall filter
	DropCaps   bool `json:"caps,omitempty"`     // empty capability sets and bounding set
}

// helperSpec is everything the helper needs, passed as JSON over a pipe (not
// argv: other users can read a process's command line, and Env may carry
// values the caller chose to pass).
type helperSpec struct {
	Path      string   `json:"path"` // resolved program
	Argv      []string `json:"argv"`
	Env       []string `json:"env"`
	Cwd       string   `json:"cwd"`
	Mode      Mode     `json:"mode"`
	Network   bool     `json:"net,omitempty"`
	Roots     []Root   `json:"roots,omitempty"`
	Layers    layers   `json:"layers"`
	FileSize  int64    `json:"fsize,omitempty"`
	Processes int64    `json:"nproc,omitempty"`
	// Sockets are the unix sockets outside to mask, Hidden the directories
	// to cover because they can be entered but not listed: the launcher
	// scans once for both (and caches) so the helper starts faster.
	Sockets []string `json:"sockets,omitempty"`
	Hidden  []string `json:"hidden,omitempty"`
}

// helperStatus reads the helper's status pipe: "ready" once the command
// started, "error MSG" when setup failed (nothing ran), "signal N" when a
// signal killed the command.
type helperStatus struct {
	mu       sync.Mutex
	signal   int
	finished chan struct{}
}

// readStatus consumes lines up to "ready" or "error"; the rest is read in
// the background until the helper closes the pipe.
func readStatus(r io.ReadCloser) (*helperStatus, error) {
	s := &helperStatus{finished: make(chan struct{})}
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	line = strings.TrimSpace(line)
	switch {
	case line == "ready":
	case strings.HasPrefix(line, "error "):
		r.Close()
		return nil, refuse("%s", strings.TrimPrefix(line, "error "))
	default:
		r.Close()
		if err != nil {
			return nil, refuse("the sandbox helper died before starting the command (%v)", err)
		}
		return nil, refuse("the sandbox helper said %q", line)
	}
	go func() {
		defer close(s.finished)
		defer r.Close()
		for {
			line, err := br.ReadString('\n')
			if n, ok := strings.CutPrefix(strings.TrimSpace(line), "signal "); ok {
				if v, err := strconv.Atoi(n); err == nil {
					s.mu.Lock()
					s.signal = v
					s.mu.Unlock()
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return s, nil
}

func (s *helperStatus) apply(r *Result) {
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signal != 0 {
		r.Signal = s.signal
		r.ExitCode = 128 + s.signal
	}
}
