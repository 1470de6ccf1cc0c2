package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/patch"
)

// recoverInterrupted finishes or rolls back, before the first request, the
// changes a killed Warden left half done in the workspace folders (see
// patch.Recover), and keeps what it did for showInterrupted.
func (s *Server) recoverInterrupted(folders []WorkspaceFolder) {
	var roots []string
	for _, f := range folders {
		if f.Path != "" {
			roots = append(roots, f.Path)
		}
	}
	if len(roots) == 0 {
		return // no workspace: nothing of it to recover, and not every change
	}
	done, err := patch.Recover(patch.JournalDir(), roots...)
	var msgs []recoveredMessage
	for _, r := range done {
		s.log.Warn("interrupted change recovered", "root", r.Root, "finished", r.Finished, "files", r.Files)
		msgs = append(msgs, recoveredMessage{protocol.MessageTypeWarning, "Warden: " + r.String()})
	}
	if err != nil {
		s.log.Error("interrupted change not recovered", "err", err)
		msgs = append(msgs, recoveredMessage{protocol.MessageTypeError, "Warden: " + err.Error()})
	}
	s.mu.Lock()
	s.recovered = msgs
	s.mu.Unlock()
}

type recoveredMessage struct {
	kind protocol.MessageType
	text string
}

// showInterrupted tells the user, once the client may show messages, what
// recoverInterrupted did.
func (s *Server) showInterrupted() {
	s.mu.Lock()
	msgs := s.recovered
	s.recovered = nil
	s.mu.Unlock()
	for _, m := range msgs {
		s.client.ShowMessage(m.kind, m.text)
	}
}
