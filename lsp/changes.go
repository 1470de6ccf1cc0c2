package lsp

import (
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/changes"
	"github.com/wardenhq/warden/sandbox"
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

// primeChanges starts listing folders for the change record in the
// background, as soon as they are known, so that the first command the
// agent runs there costs what it changes rather than a walk of the whole
// workspace (the listing is then kept, watched, as after any run), where
// runs list their roots at all (approvals.ChangeLog.Prime).
func (s *Server) primeChanges(folders []WorkspaceFolder) {
	cfg := s.Config()
	if !cfg.RecordsChanges() {
		return
	}
	var roots []string
	for _, f := range folders {
		if f.Path != "" {
			roots = append(roots, f.Path)
		}
	}
	if len(roots) > 0 {
		s.ChangeLog().Prime(sandbox.Mode(cfg.SandboxMode), roots)
	}
}
