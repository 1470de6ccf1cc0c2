package lsp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"go.lsp.dev/protocol"
)

// A job's progress in the editor begins before the job runs: with the
// client's own token at once, with one of ours after the client answered
// the create request. An editor that blocks while it shows a dialog
// (Neovim) must already show what is running when the job's first dialog or
// review appears; the round trip costs about 0.3 ms on the warm path.

// openProgress begins job's progress, or does nothing for a client without
// progress support or that refuses the token.
func (t *jobTable) openProgress(job *Job, log *slog.Logger) {
	s := t.s
	token, _ := job.progressToken()
	if token == nil {
		if !s.Capabilities().WorkDoneProgress {
			return
		}
		name := "warden-job-" + job.ID
		// Register the token before asking, so a cancel that races the
		// answer still finds the job.
		job.mu.Lock()
		job.tokKey = fmt.Sprintf("%q", name)
		job.mu.Unlock()
		token = json.RawMessage(strconv.Quote(name))
		// The connection's context, not the job's: a job cancelled while
		// the client answers still closes its progress.
		if err := s.client.createProgress(s.connCtx, token); err != nil {
			log.Warn("no progress token from the client; running without progress", "err", err)
			return
		}
		job.mu.Lock()
		job.token = token
		job.mu.Unlock()
	}
	yes := true
	s.client.progress(token, progressValue{Kind: "begin", Title: job.Title, Cancellable: &yes})
}

// closeProgress ends job's progress with msg (the connection is up). A client without progress UI
// is told how the job ended with showMessage, unless the job said so
// already or quiet (its failure was shown).
func (t *jobTable) closeProgress(job *Job, msg string, quiet bool) {
	s := t.s
	if token, _ := job.progressToken(); token != nil {
		s.client.progress(token, progressValue{Kind: "end", Message: msg})
		return
	}
	if !quiet && !job.shown.Load() && msg != "" {
		s.client.ShowMessage(protocol.MessageTypeInfo, fmt.Sprintf("Warden: %s (job %s): %s", job.Title, job.ID, msg))
	}
}
