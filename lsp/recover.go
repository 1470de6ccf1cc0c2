package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent/patch"
)

// recoverInterrupted finishes or rolls back, before the first request, the
// changes a killed Warden left half done in the workspace folders (see
// patch.Recover), and keeps what it did for showInterrupted.
func (s *Server) recoverInterrupted(folders []WorkspaceFolder) {
	msgs := s.recoverIn(folders)
	s.mu.Lock()
	s.recovered = msgs
	s.mu.Unlock()
}

// recoverIn settles the interrupted changes in folders and returns what to
// tell the user about them.
func (s *Server) recoverIn(folders []WorkspaceFolder) []recoveredMessage {
	var roots []string
	for _, f := range folders {
		if f.Path != "" {
			roots = append(roots, f.Path)
		}
	}
	if len(roots) == 0 {
		return nil // no workspace: nothing of it to recover, and not every change
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
	return msgs
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
	s.tellRecovered(msgs)
}

// recoverAdded settles, as initialize does for the first folders, the
// interrupted changes in folders added later, and says so at once.
func (s *Server) recoverAdded(folders []WorkspaceFolder) {
	s.tellRecovered(s.recoverIn(folders))
}

func (s *Server) tellRecovered(msgs []recoveredMessage) {
	for _, m := range msgs {
		s.client.ShowMessage(m.kind, m.text)
	}
}
