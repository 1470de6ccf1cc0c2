package lsp

import (
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
)

// logSkippedRoots tells the client's log, once per connection and root,
// about each configured writable root that does not exist and is skipped
// (as Codex does; a typo there should not go unnoticed). Called with st.mu.
func (s *Server) logSkippedRoots(st *approvalState, cfg config.Config) {
	_, missing := config.WritableRoots(cfg)
	for _, m := range missing {
		if st.skipped[m] {
			continue
		}
		if st.skipped == nil {
			st.skipped = map[string]bool{}
		}
		st.skipped[m] = true
		s.Client().LogMessage(protocol.MessageTypeInfo, fmt.Sprintf("Warden: writable root %s (writable_roots) does not exist: skipped", m))
	}
}
