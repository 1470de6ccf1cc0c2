package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/wardenhq/warden/lsp/wire"
	"go.lsp.dev/protocol"
)

// A job's progress in the editor begins as the job starts: with the
// client's own token at once, with one of ours once the client has answered
// the create request. The job does not wait for that answer (a round trip
// of 0.3-0.5 ms on the warm path): what it reports meanwhile is sent after
// the begin, in order, and anything that waits for the user (a dialog, an
// edit to review: Client.call's nudged requests) waits for the begin first,
// because an editor that blocks while it shows a dialog (Neovim) must
// already show what is running.

// openProgress begins job's progress, or does nothing for a client without
// progress support or that refuses the token. It returns at once; job.opened
// is closed when the begin is out or will never be.
func (t *Table) openProgress(job *Job, log *slog.Logger) {
	conn := t.conn
	yes := true
	begin := wire.ProgressValue{Kind: "begin", Title: job.Title, Cancellable: &yes}
	token, _ := job.progressToken()
	if token != nil {
		conn.SendProgress(token, begin)
		close(job.opened)
		return
	}
	if !conn.HasProgressUI() {
		close(job.opened)
		return
	}
	name := "warden-job-" + job.ID
	token = json.RawMessage(strconv.Quote(name))
	// Register the token before asking, so a cancel that races the answer
	// still finds the job.
	job.mu.Lock()
	job.tokKey = fmt.Sprintf("%q", name)
	job.mu.Unlock()
	go func() {
		defer close(job.opened)
		// The connection's context, not the job's: a job cancelled while
		// the client answers still closes its progress.
		err := conn.CreateProgress(conn.Context(), token)
		job.sendMu.Lock()
		defer job.sendMu.Unlock()
		job.mu.Lock()
		pending := job.pending
		job.pending = nil
		if err == nil {
			job.token = token
		}
		job.mu.Unlock()
		if err != nil {
			log.Warn("no progress token from the client; running without progress", "err", err)
			return
		}
		conn.SendProgress(token, begin)
		for _, v := range pending {
			conn.SendProgress(token, v)
		}
	}()
}

// isClosed says whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// AwaitProgress waits until the progress of the job running in ctx, if any,
// has begun (or will not), or ctx ends.
func AwaitProgress(ctx context.Context) {
	job, _ := ctx.Value(jobKey{}).(*Job)
	if job == nil {
		return
	}
	select {
	case <-job.opened:
	case <-ctx.Done():
	}
}

// closeProgress ends job's progress with msg (the connection is up). A client without progress UI
// is told how the job ended with showMessage, unless the job said so
// already or quiet (its failure was shown).
func (t *Table) closeProgress(job *Job, msg string, quiet bool) {
	conn := t.conn
	<-job.opened // the end comes after the begin
	if token, _ := job.progressToken(); token != nil {
		conn.SendProgress(token, wire.ProgressValue{Kind: "end", Message: msg})
		return
	}
	if !quiet && !job.shown.Load() && msg != "" {
		conn.ShowMessage(protocol.MessageTypeInfo, fmt.Sprintf("%s (job %s): %s", job.Title, job.ID, msg))
	}
}
