package approvals

import (
	"encoding/json"
	"strings"

	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkKey is the session key of a network destination: host, protocol
// and port, so allowing https to a host never allows plain http or another
// port.
func NetworkKey(d netproxy.Destination) string {
	b, _ := json.Marshal(struct {
		Kind     string `json:"kind"`
		Host     string `json:"host"`
		Protocol string `json:"protocol"`
		Port     int    `json:"port"`
	}{"network", rules.NormalizeHost(d.Host), string(d.Protocol), d.Port})
	return string(b)
}

// keyOr separates a session key from the wider keys that also satisfy it.
// Keys are JSON, which never holds a raw control character.
const keyOr = "\x1f"

// orKeys is the session key exact, also satisfied when one of wider was
// approved for the session (a network grant for pypi.org:443 is covered
// by one for pypi.org on any port, as a rule's grant covers it). An
// "Allow for session" answer stores exact only.
func orKeys(exact string, wider ...string) string {
	return strings.Join(append([]string{exact}, wider...), keyOr)
}

// keyAlternatives are the keys that satisfy k, exact first.
func keyAlternatives(k string) []string { return strings.Split(k, keyOr) }

// exactKey is what an approval of k stores: what was asked, never a wider
// key.
func exactKey(k string) string {
	exact, _, _ := strings.Cut(k, keyOr)
	return exact
}

// Remember stores keys as approved for the session, as an "Allow for
// session" answer does.
func (s *SessionStore) Remember(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.approved[exactKey(k)] = true
	}
}

// Contacted reports whether host was reached (allowed) before in this
// session.
func (s *SessionStore) Contacted(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contacted[rules.NormalizeHost(host)]
}

// markContacted notes that a connection to host was allowed.
func (s *SessionStore) markContacted(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contacted == nil {
		s.contacted = map[string]bool{}
	}
	s.contacted[rules.NormalizeHost(host)] = true
}
