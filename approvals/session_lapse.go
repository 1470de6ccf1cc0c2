package approvals

import (
	"encoding/json"
	"fmt"
)

// An "Allow for session" of a run outside the sandbox approved a command
// that reads what it reads at that moment: a Makefile, a test suite, a
// script. The agent's next patch, or its next sandboxed run that may write,
// can change any of that, so those approvals lapse there and the next such
// run asks again, saying why. Sandboxed approvals stay: the sandbox still
// holds whatever the command now reads.

// unsandboxedKey reports whether k is the session key of a command run
// outside the sandbox (CommandKey with sandboxKey(_, true)).
func unsandboxedKey(k string) bool {
	var key struct {
		Kind    string `json:"kind"`
		Sandbox string `json:"sandbox"`
	}
	return json.Unmarshal([]byte(k), &key) == nil && key.Kind == "command" && key.Sandbox == sandboxKey(Sandbox{}, true)
}

// LapseUnsandboxed ends every "Allow for session" of a run outside the
// sandbox; why says what happened ("the agent's patch to 2 files").
func (s *SessionStore) LapseUnsandboxed(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.approved {
		if unsandboxedKey(k) {
			delete(s.approved, k)
			if s.lapsed == nil {
				s.lapsed = map[string]string{}
			}
			s.lapsed[k] = why
		}
	}
}

// Lapsed says why an earlier "Allow for session" of one of keys no longer
// holds, or "" when none lapsed.
func (s *SessionStore) Lapsed(keys []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if why, ok := s.lapsed[exactKey(k)]; ok {
			return fmt.Sprintf("asked again: your \"Allow for session\" of it lapsed after %s, which may have changed what it runs", why)
		}
	}
	return ""
}
