package lsp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"go.lsp.dev/protocol"
)

// jobProgress is a job's progress in the editor. The job starts only
// after the client answered the token request and the begin is out: an
// editor that blocks while it shows a dialog (Neovim) must already show
// what is running when the job's first dialog or review appears. The
// round trip costs about 0.3 ms on the warm path; an earlier version that
// ran the job meanwhile showed dialogs with no job in the status line.
// Reports made before the begin are not sent (the protocol forbids progress
// before the token exists); the latest follows the begin.
type jobProgress struct {
	job *Job
}

// openProgress begins the job's progress: at once with the client's own
// token, after the client's answer with one of ours, or not at all when
// the client has no progress support.
func (t *jobTable) openProgress(job *Job, log *slog.Logger) *jobProgress {
	s := t.s
	p := &jobProgress{job: job}
	token, _ := job.progressToken()
	if token != nil {
		job.mu.Lock()
		job.token = nil // set again by begin, once the begin is out
		job.mu.Unlock()
		p.begin(token)
		return p
	}
	if !s.Capabilities().WorkDoneProgress {
		return p
	}
	name := "warden-job-" + job.ID
	// Register the token before asking, so a cancel that races the answer
	// still finds the job.
	job.mu.Lock()
	job.tokKey = fmt.Sprintf("%q", name)
	job.mu.Unlock()
	token = json.RawMessage(strconv.Quote(name))
	// The connection's context, not the job's: a job cancelled while the
	// client answers still closes its progress.
	if err := s.client.createProgress(s.connCtx, token); err != nil {
		log.Warn("no progress token from the client; running without progress", "err", err)
	} else {
		p.begin(token)
	}
	return p
}

// begin sends the begin and makes the token the job's. Under job.mu: a
// Report that sees the token is sent after the begin.
func (p *jobProgress) begin(token json.RawMessage) {
	job := p.job
	yes := true
	job.mu.Lock()
	defer job.mu.Unlock()
	c := job.server.client
	c.progress(token, progressValue{Kind: "begin", Title: job.Title, Cancellable: &yes})
	if job.message != "" || job.percent >= 0 {
		// The latest report made before the begin.
		c.progress(token, progressValue{Kind: "report", Message: job.message, Percentage: pct(job.percent)})
	}
	job.token = token
}

// close ends the job's progress with msg; quiet: no closing showMessage
// for a client without progress UI.
func (p *jobProgress) close(msg string, quiet bool) {
	s := p.job.server
	if s.connCtx.Err() != nil {
		return
	}
	if token, _ := p.job.progressToken(); token != nil {
		s.client.progress(token, progressValue{Kind: "end", Message: msg})
		return
	}
	// No progress UI: the end of the job would go unseen, so say how it
	// ended, unless the job already did.
	if !quiet && !p.job.shown.Load() && msg != "" {
		s.client.ShowMessage(protocol.MessageTypeInfo, fmt.Sprintf("Warden: %s (job %s): %s", p.job.Title, p.job.ID, msg))
	}
}
