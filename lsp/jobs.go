package lsp

import (
	"context"
	"encoding/json"
	"log/slog"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/wire"
)

// Jobs lists the running jobs.
func (s *Server) Jobs() []jobs.Info { return s.jobs.List() }

// CancelJob cancels the job with the given id; it reports whether one ran.
func (s *Server) CancelJob(id string) bool { return s.jobs.Cancel(id) }

// jobConn is the connection as the job table sees it.
type jobConn struct{ s *Server }

func (c jobConn) Context() context.Context { return c.s.connCtx }
func (c jobConn) Logger() *slog.Logger     { return c.s.log }
func (c jobConn) HasProgressUI() bool      { return c.s.Capabilities().WorkDoneProgress }

func (c jobConn) ShowMessage(typ protocol.MessageType, message string) error {
	return c.s.client.ShowMessage(typ, message)
}

func (c jobConn) SendProgress(token json.RawMessage, v wire.ProgressValue) error {
	return c.s.client.progress(token, v)
}

func (c jobConn) CreateProgress(ctx context.Context, token json.RawMessage) error {
	return c.s.client.createProgress(ctx, token)
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
		if !s.jobs.CancelByToken(key) {
			s.log.Debug("window/workDoneProgress/cancel for no running job", "token", key)
		}
		return nil, nil
	})
}
