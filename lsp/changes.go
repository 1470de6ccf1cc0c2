package lsp

import (
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/changes"
)

type changeLogKey struct{}

// changeLogFor is the change log the configuration asks for: nil when
// record_changes is off.
func (s *Server) changeLogFor(cfg config.Config) *approvals.ChangeLog {
	if !cfg.RecordsChanges() {
		return nil
	}
	return s.ChangeLog()
}

// ChangeLog records what each run that can write changes in the workspace,
// in the same undo history as patches (Checkpoints). The server keeps each
// root's listing in memory, watched, so a run costs what changed.
func (s *Server) ChangeLog() *approvals.ChangeLog {
	cps := s.Checkpoints() // not inside Value's init: it holds the lock Checkpoints takes
	return s.Value(changeLogKey{}, func() any {
		return &approvals.ChangeLog{
			Recorder: &changes.Recorder{Store: cps.Store(), Keep: true},
			Save: func(ch *changes.Change, summary string) error {
				_, err := cps.RecordCommand(ch, summary)
				return err
			},
		}
	}).(*approvals.ChangeLog)
}
