package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/wire"
	"github.com/wardenhq/warden/sandbox"
)

// Func is the work of a job: it may call the client and take as long as it
// needs, and must return soon after ctx ends. The returned string is the
// closing message of its progress; an error is shown to the user unless the
// job was cancelled.
type Func func(ctx context.Context, job *Job) (string, error)

// Conn is the editor connection jobs run on and report to.
type Conn interface {
	// Context ends with the connection; jobs run under it.
	Context() context.Context
	Logger() *slog.Logger
	// HasProgressUI says whether the client announced work-done progress.
	HasProgressUI() bool
	// ShowMessage sends window/showMessage.
	ShowMessage(typ protocol.MessageType, message string) error
	// SendProgress sends $/progress with a raw token.
	SendProgress(token json.RawMessage, v wire.ProgressValue) error
	// CreateProgress sends window/workDoneProgress/create with a raw token.
	CreateProgress(ctx context.Context, token json.RawMessage) error
}

// Job is a running command. Its methods are safe for concurrent use.
type Job struct {
	ID      string
	Command string
	Title   string
	Started time.Time

	conn   Conn
	cancel context.CancelFunc
	reqKey string // executeCommand request id key
	// token is the progress token (client's workDoneToken or our own);
	// nil when the client has no progress support.
	token   json.RawMessage
	tokKey  string
	mu      sync.Mutex
	message string
	percent int
	// shown: the job told the user its outcome itself (Job.Show), so the
	// closing message for clients without progress UI is not repeated.
	shown atomic.Bool
	// opened is closed once the progress has begun or will not; until
	// then (the client answers our create request) reports wait in
	// pending. sendMu keeps the begin before them (progress.go).
	opened  chan struct{}
	pending []wire.ProgressValue
	sendMu  sync.Mutex
}

// jobKey carries the running *Job in its context.
type jobKey struct{}

// Show tells the user the job's outcome with window/showMessage. A job that
// calls it is not announced again when it ends.
func (j *Job) Show(typ protocol.MessageType, message string) {
	j.shown.Store(true)
	if err := j.conn.ShowMessage(typ, message); err != nil {
		j.conn.Logger().Debug("showMessage failed", "job", j.ID, "err", err)
	}
}

// Report updates the job's progress. percent is 0..100, or negative when
// unknown.
func (j *Job) Report(message string, percent int) {
	v := wire.ProgressValue{Kind: "report", Message: message, Percentage: wire.Percent(percent)}
	j.sendMu.Lock()
	defer j.sendMu.Unlock()
	j.mu.Lock()
	j.message, j.percent = message, percent
	token := j.token
	if token == nil && !isClosed(j.opened) {
		j.pending = append(j.pending, v)
	}
	j.mu.Unlock()
	if token == nil {
		return
	}
	if err := j.conn.SendProgress(token, v); err != nil {
		j.conn.Logger().Debug("progress report failed", "job", j.ID, "err", err)
	}
}

func (j *Job) progressToken() (json.RawMessage, string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.token, j.tokKey
}

// HasProgress says whether the editor shows the job's progress (it has a
// progress token).
func (j *Job) HasProgress() bool {
	token, _ := j.progressToken()
	return token != nil
}

// Cancel cancels the job.
func (j *Job) Cancel() { j.cancel() }

// Info describes a running job (for warden.status).
type Info struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	Title   string    `json:"title"`
	Started time.Time `json:"started"`
	Message string    `json:"message,omitempty"`
	Percent *uint32   `json:"percent,omitempty"`
}

// Table is a connection's running jobs.
type Table struct {
	conn Conn
	mu   sync.Mutex
	next int
	jobs map[string]*Job
	wg   sync.WaitGroup
}

// NewTable returns an empty table of jobs that run on conn.
func NewTable(conn Conn) *Table {
	return &Table{conn: conn, jobs: make(map[string]*Job)}
}

// Start launches fn as the job of the command name (titled title in the
// progress) and returns at once. reqKey is the key of the executeCommand
// request (wire.IDKey), clientToken its workDoneToken, if any.
func (t *Table) Start(name, title string, fn Func, reqKey string, clientToken json.RawMessage) *Job {
	ctx, cancel := context.WithCancel(t.conn.Context())
	t.mu.Lock()
	t.next++
	job := &Job{
		ID:      strconv.Itoa(t.next),
		Command: name,
		Title:   title,
		Started: time.Now(),
		conn:    t.conn,
		cancel:  cancel,
		reqKey:  reqKey,
		percent: -1,
		opened:  make(chan struct{}),
	}
	ctx = context.WithValue(ctx, jobKey{}, job)
	if k, ok := wire.IDKey(clientToken); ok {
		job.token, job.tokKey = clientToken, k
	}
	t.jobs[job.ID] = job
	t.mu.Unlock()

	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		t.run(ctx, job, fn)
	}()
	return job
}

func (t *Table) run(ctx context.Context, job *Job, fn Func) {
	conn := t.conn
	log := conn.Logger().With("job", job.ID, "command", job.Command)
	t.openProgress(job, log)
	log.Info("job started")
	msg, err := runJob(ctx, job, fn)
	t.remove(job)
	switch {
	case err == nil:
		log.Info("job finished", "message", msg, "took", time.Since(job.Started))
	case ctx.Err() != nil:
		msg = "cancelled"
		log.Info("job cancelled", "err", err)
	default:
		msg = "failed: " + err.Error()
		log.Error("job failed", "err", err)
		if conn.Context().Err() == nil {
			conn.ShowMessage(protocol.MessageTypeError, fmt.Sprintf("%s failed: %v", job.Title, err))
		}
	}
	if conn.Context().Err() != nil {
		return
	}
	// The outcome is out (job.Show, or the end below): the sandbox may now
	// start the next command's spare helper without delaying this one.
	defer sandbox.RefillSpares()
	// Without progress UI (eglot) the end is said with showMessage, unless
	// the job said it already (failures were shown above).
	quiet := err != nil && ctx.Err() == nil
	t.closeProgress(job, msg, quiet)
}

// runJob runs fn, turning a panic into an error so one bad job cannot take
// the server down.
func runJob(ctx context.Context, job *Job, fn Func) (msg string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			job.conn.Logger().Error("job panicked", "job", job.ID, "panic", r)
		}
	}()
	return fn(ctx, job)
}

func (t *Table) remove(job *Job) {
	t.mu.Lock()
	delete(t.jobs, job.ID)
	t.mu.Unlock()
}

func (t *Table) find(match func(*Job) bool) []*Job {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Job
	for _, j := range t.jobs {
		if match(j) {
			out = append(out, j)
		}
	}
	return out
}

// CancelByRequest cancels the jobs started by the executeCommand request
// whose id has key (wire.IDKey): its $/cancelRequest.
func (t *Table) CancelByRequest(key string) {
	for _, j := range t.find(func(j *Job) bool { return j.reqKey == key }) {
		t.conn.Logger().Info("job cancelled by $/cancelRequest", "job", j.ID)
		j.cancel()
	}
}

// CancelByToken cancels the jobs whose progress token has key
// (window/workDoneProgress/cancel); it reports whether one ran.
func (t *Table) CancelByToken(key string) bool {
	jobs := t.find(func(j *Job) bool { _, k := j.progressToken(); return k == key })
	for _, j := range jobs {
		t.conn.Logger().Info("job cancelled by window/workDoneProgress/cancel", "job", j.ID)
		j.cancel()
	}
	return len(jobs) > 0
}

// CancelAll cancels every running job.
func (t *Table) CancelAll() {
	for _, j := range t.find(func(*Job) bool { return true }) {
		j.cancel()
	}
}

// Wait waits for jobs to return, at most a few seconds (they must honour
// their ctx, which has ended).
func (t *Table) Wait() {
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.conn.Logger().Warn("jobs still running at exit")
	}
}

// List describes the running jobs, oldest first.
func (t *Table) List() []Info {
	jobs := t.find(func(*Job) bool { return true })
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Started.Before(jobs[k].Started) })
	out := make([]Info, 0, len(jobs))
	for _, j := range jobs {
		j.mu.Lock()
		out = append(out, Info{ID: j.ID, Command: j.Command, Title: j.Title, Started: j.Started, Message: j.message, Percent: wire.Percent(j.percent)})
		j.mu.Unlock()
	}
	return out
}

// Cancel cancels the job with the given id; it reports whether one ran.
func (t *Table) Cancel(id string) bool {
	jobs := t.find(func(j *Job) bool { return j.ID == id })
	for _, j := range jobs {
		j.cancel()
	}
	return len(jobs) > 0
}
