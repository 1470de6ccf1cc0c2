package approvals

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditFile is the audit log's name inside the state directory.
const AuditFile = "audit.log"

// AuditLog appends one JSON object per line for every request, decision and
// result, and fsyncs each line so a crash never loses what was approved.
type AuditLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"` // requirement | prompt | decision | run | refused | amendment
	Kind     string    `json:"kind"`  // command | patch
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
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file.
func (l *AuditLog) Close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
