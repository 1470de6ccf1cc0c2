package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/wire"
	"github.com/wardenhq/warden/sandbox"
)

// Job is a running command. Its methods are safe for concurrent use.
type Job struct {
	ID      string
	Command string
	Title   string
	Started time.Time

	server *Server
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
	// pending. sendMu keeps the begin before them (jobs_progress.go).
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
	if err := j.server.client.ShowMessage(typ, message); err != nil {
		j.server.log.Debug("showMessage failed", "job", j.ID, "err", err)
	}
}

// Server is the server the job runs on.
func (j *Job) Server() *Server { return j.server }

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
	if err := j.server.client.progress(token, v); err != nil {
		j.server.log.Debug("progress report failed", "job", j.ID, "err", err)
	}
}

func (j *Job) progressToken() (json.RawMessage, string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.token, j.tokKey
}

// Cancel cancels the job.
func (j *Job) Cancel() { j.cancel() }

// JobInfo describes a running job (for warden.status).
type JobInfo struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	Title   string    `json:"title"`
	Started time.Time `json:"started"`
	Message string    `json:"message,omitempty"`
	Percent *uint32   `json:"percent,omitempty"`
}

type jobTable struct {
	s    *Server
	mu   sync.Mutex
	next int
	jobs map[string]*Job
	wg   sync.WaitGroup
}

func newJobTable(s *Server) *jobTable {
	return &jobTable{s: s, jobs: make(map[string]*Job)}
}

// start launches fn as a job and returns at once.
func (t *jobTable) start(cmd Command, fn JobFunc, reqKey string, clientToken json.RawMessage) *Job {
	ctx, cancel := context.WithCancel(t.s.connCtx)
	t.mu.Lock()
	t.next++
	job := &Job{
		ID:      strconv.Itoa(t.next),
		Command: cmd.Name,
		Title:   cmd.Title,
		Started: time.Now(),
		server:  t.s,
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

func (t *jobTable) run(ctx context.Context, job *Job, fn JobFunc) {
	s := t.s
	log := s.log.With("job", job.ID, "command", job.Command)
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
		if s.connCtx.Err() == nil {
			s.client.ShowMessage(protocol.MessageTypeError, fmt.Sprintf("%s failed: %v", job.Title, err))
		}
	}
	if s.connCtx.Err() != nil {
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
func runJob(ctx context.Context, job *Job, fn JobFunc) (msg string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			job.server.log.Error("job panicked", "job", job.ID, "panic", r)
		}
	}()
	return fn(ctx, job)
}

func (t *jobTable) remove(job *Job) {
	t.mu.Lock()
	delete(t.jobs, job.ID)
	t.mu.Unlock()
}

func (t *jobTable) find(match func(*Job) bool) []*Job {
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

func (t *jobTable) cancelByRequest(key string) {
	for _, j := range t.find(func(j *Job) bool { return j.reqKey == key }) {
		t.s.log.Info("job cancelled by $/cancelRequest", "job", j.ID)
		j.cancel()
	}
}

func (t *jobTable) cancelByToken(key string) bool {
	jobs := t.find(func(j *Job) bool { _, k := j.progressToken(); return k == key })
	for _, j := range jobs {
		t.s.log.Info("job cancelled by window/workDoneProgress/cancel", "job", j.ID)
		j.cancel()
	}
	return len(jobs) > 0
}

func (t *jobTable) cancelAll() {
	for _, j := range t.find(func(*Job) bool { return true }) {
		j.cancel()
	}
}

// wait waits for jobs to return, at most a few seconds (they must honour
// their ctx, which has ended).
func (t *jobTable) wait() {
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.s.log.Warn("jobs still running at exit")
	}
}

func (t *jobTable) list() []JobInfo {
	jobs := t.find(func(*Job) bool { return true })
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Started.Before(jobs[k].Started) })
	out := make([]JobInfo, 0, len(jobs))
	for _, j := range jobs {
		j.mu.Lock()
		out = append(out, JobInfo{ID: j.ID, Command: j.Command, Title: j.Title, Started: j.Started, Message: j.message, Percent: wire.Percent(j.percent)})
		j.mu.Unlock()
	}
	return out
}

// Jobs lists the running jobs.
func (s *Server) Jobs() []JobInfo { return s.jobs.list() }

// CancelJob cancels the job with the given id; it reports whether one ran.
func (s *Server) CancelJob(id string) bool {
	jobs := s.jobs.find(func(j *Job) bool { return j.ID == id })
	for _, j := range jobs {
		j.cancel()
	}
	return len(jobs) > 0
}

func init() {
	handle("window/workDoneProgress/cancel", func(s *Server, _ context.Context, params json.RawMessage) (any, error) {
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		key, ok := wire.IDKey(p.Token)
		if !ok {
			return nil, InvalidParams("params.token: want a number or a string")
		}
		if !s.jobs.cancelByToken(key) {
			s.log.Debug("window/workDoneProgress/cancel for no running job", "token", key)
		}
		return nil, nil
	})
}
