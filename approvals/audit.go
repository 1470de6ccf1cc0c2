package approvals

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/sandbox"
)

// AuditFile is the audit log's name inside the state directory.
const AuditFile = "audit.log"

// AuditLog appends one JSON object per line for every request, decision and
// result. Write appends a line; Sync makes every line written before it
// durable, with one fsync shared by every caller waiting at the same time
// (group commit), so a command pays for one fsync per barrier, not one per
// line. Record is Write then Sync.
type AuditLog struct {
	mu      sync.Mutex // orders writes
	f       *os.File
	path    string
	written uint64 // lines written, under mu
	// writeErr sticks like syncErr: a line that could not be written is
	// never made durable, so no later Sync may report success.
	writeErr error // under mu

	syncMu sync.Mutex    // one fsync at a time; waiters queue here
	synced atomic.Uint64 // lines known durable
	// syncErr sticks: after a failed fsync the kernel may have dropped the
	// dirty pages, so a later "successful" fsync proves nothing.
	syncErr error         // under syncMu
	syncs   atomic.Uint64 // fsyncs made, for tests and the benchmark's story
}

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"` // requirement | prompt | decision | run | quarantine | refused | amendment | connection
	Kind     string    `json:"kind"`  // command | patch | network
	Argv     []string  `json:"argv,omitempty"`
	Files    []string  `json:"files,omitempty"`
	Cwd      string    `json:"cwd,omitempty"`
	Decision string    `json:"decision,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// Justification is the agent's reason as it wrote it (the dialog shows
	// it escaped).
	Justification string   `json:"justification,omitempty"`
	Risk          string   `json:"risk,omitempty"`
	Sandboxed     *bool    `json:"sandboxed,omitempty"`
	ExitCode      *int     `json:"exit_code,omitempty"`
	Cached        bool     `json:"cached,omitempty"`
	Amendment     []string `json:"amendment,omitempty"`
	// Grant is the additional permissions asked for or given (grant.go).
	Grant *sandbox.Grant `json:"grant,omitempty"`
	// Network is the destination of a network event (kind network).
	Network *AuditNetwork `json:"network,omitempty"`
	// Changed is what a run changed in the workspace (recorded for undo).
	Changed string `json:"changed,omitempty"`
}

// AuditNetwork is what a network event records: the destination, the run
// that connected and, for a connection, what it carried.
type AuditNetwork struct {
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Protocol   string `json:"protocol"`
	RunID      string `json:"run_id,omitempty"`
	BytesUp    int64  `json:"bytes_up"`
	BytesDown  int64  `json:"bytes_down"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
}

// OpenAuditLog opens (creating) dir/audit.log for appending.
func OpenAuditLog(dir string) (*AuditLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	path := filepath.Join(dir, AuditFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &AuditLog{f: f, path: path}, nil
}

// Path is the log file's path.
func (l *AuditLog) Path() string { return l.path }

// Record appends ev and syncs it to disk. A nil log records nothing.
func (l *AuditLog) Record(ev AuditEvent) error {
	if err := l.Write(ev); err != nil {
		return err
	}
	return l.Sync()
}

// Write appends ev without waiting for the disk: it is durable once a later
// Sync returns nil. A nil log records nothing.
func (l *AuditLog) Write(ev AuditEvent) error {
	if l == nil {
		return nil
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(line); err != nil {
		l.writeErr = fmt.Errorf("audit log %s: %w", l.path, err)
		return l.writeErr
	}
	l.written++
	return nil
}

// Sync returns once every line written before the call is on disk. Callers
// that arrive while an fsync runs wait for it and share the next one.
func (l *AuditLog) Sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	want, werr := l.written, l.writeErr
	l.mu.Unlock()
	if werr != nil {
		return werr
	}
	if l.synced.Load() >= want {
		return nil
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.syncErr != nil {
		return l.syncErr
	}
	if l.synced.Load() >= want { // a fsync that started after our write covered it
		return nil
	}
	l.mu.Lock()
	upto := l.written // this fsync covers everything written so far
	l.mu.Unlock()
	l.syncs.Add(1)
	if err := l.f.Sync(); err != nil {
		l.syncErr = fmt.Errorf("audit log %s: %w", l.path, err)
		return l.syncErr
	}
	l.synced.Store(upto)
	return nil
}

// Close syncs what is pending and closes the file.
func (l *AuditLog) Close() error {
	if l == nil {
		return nil
	}
	serr := l.Sync()
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	return serr
}
