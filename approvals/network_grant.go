package approvals

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// runGrant is the network part of a run's approved grant: hosts, each with
// any port or one port; and the destinations the run was refused that a
// grant would let through (see noteRetryable).
type runGrant struct {
	hosts     map[string][]int // host → ports; an empty list is any port
	retryable []string         // host:port, in refusal order, no duplicates
	tooMany   bool             // more than maxRetryHosts: offer none
}

// grantEntry reads one network grant entry: "host" (any port) or
// "host:port" ("[v6]:port"). The host is one name or IP address as network
// rules write it, never a wildcard (a grant names what it opens), never an
// IPv4 address in a disguised spelling.
func grantEntry(s string) (host string, port int, err error) {
	raw := strings.TrimSpace(s)
	host = raw
	if h, p, err := net.SplitHostPort(raw); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, fmt.Errorf("network to %q: the port must be 1-65535", command.EscapeText(s))
		}
		host, port = h, n
	}
	h, err := rules.NetworkRuleHost(host)
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("network to %q: %w", command.EscapeText(s), err)
	case strings.Contains(h, "*"):
		return "", 0, fmt.Errorf("network to %q: a grant names one host, not a wildcard", command.EscapeText(s))
	case risk.NonCanonicalIP(h):
		return "", 0, fmt.Errorf("network to %q: an IP address must be written as a dotted quad", command.EscapeText(s))
	}
	return h, port, nil
}

// grantHostPort is a grant entry written canonically.
func grantHostPort(host string, port int) string {
	if port == 0 {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// checkNetworkGrant checks g's network entries and writes them canonically
// (lower case, IPv6 in brackets), so the dialog, the session keys, a saved
// rule and the proxy all name the same destinations.
func checkNetworkGrant(g sandbox.Grant) (sandbox.Grant, error) {
	if len(g.Network) == 0 {
		return g, nil
	}
	hosts := make([]string, 0, len(g.Network))
	for _, n := range g.Network {
		h, port, err := grantEntry(n)
		if err != nil {
			return sandbox.Grant{}, err
		}
		hosts = append(hosts, grantHostPort(h, port))
	}
	g.Network = nil
	return g.Union(sandbox.Grant{Network: hosts}), nil
}

// networkGrantRisk grades a network grant entry from the same host facts as
// the network dialog: a known registry or the repository's own remote is
// low, an unknown host or one on this machine or network medium, a
// link-local address (cloud metadata) high.
func networkGrantRisk(entry string, remotes []string) (risk.Level, string) {
	host, _, err := grantEntry(entry)
	if err != nil {
		return risk.High, "grants network to " + command.EscapeText(entry) + ", which is not a host"
	}
	r := risk.NetworkRisk(host, 0, remotes)
	return r.Level, "grants network to " + command.EscapeText(entry) + ": " + strings.Join(r.Facts, "; ")
}

// GrantHosts lets the run runID reach hosts without a dialog: the network
// part of an approved grant ("pypi.org" any port, "pypi.org:443" one).
// Forbid rules still win. An entry that is neither is ignored (grants are
// checked when they are resolved). The returned function revokes it; call
// it when the run ends.
func (d *NetworkDecider) GrantHosts(runID string, hosts []string) (revoke func()) {
	g := &runGrant{hosts: map[string][]int{}}
	for _, h := range hosts {
		host, port, err := grantEntry(h)
		if err != nil {
			continue
		}
		if port == 0 {
			g.hosts[host] = []int{}
		} else if ports, ok := g.hosts[host]; !ok || len(ports) > 0 {
			g.hosts[host] = append(ports, port)
		}
	}
	d.mu.Lock()
	if d.grants == nil {
		d.grants = map[string]*runGrant{}
	}
	d.grants[runID] = g
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.grants[runID] == g {
			delete(d.grants, runID)
		}
	}
}

// granted reports whether the run's grant covers dest.
func (d *NetworkDecider) granted(runID string, dest netproxy.Destination) bool {
	if runID == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.grants[runID]
	if g == nil {
		return false
	}
	ports, ok := g.hosts[dest.Host]
	if !ok {
		return false
	}
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p == dest.Port {
			return true
		}
	}
	return false
}

// noteRetryable remembers that the run runID was refused dest for a reason
// a grant overrides (see Decide), so the command's retry dialog can offer
// exactly that destination.
func (d *NetworkDecider) noteRetryable(runID string, dest netproxy.Destination) {
	hp := HostPort(dest)
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.grants[runID]
	if g == nil || slices.Contains(g.retryable, hp) {
		return
	}
	if len(g.retryable) >= maxRetryHosts {
		g.tooMany = true
		return
	}
	g.retryable = append(g.retryable, hp)
}

// maxRetryHosts bounds the hosts one retry dialog offers: a command that
// was refused more is not asking for a narrow grant, and gets no offer.
const maxRetryHosts = 4

// RetryableHosts are the destinations (host:port) the run runID was refused
// that a grant would let through; call it before the run's done function.
func (d *NetworkDecider) RetryableHosts(runID string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if g := d.grants[runID]; g != nil && !g.tooMany {
		return slices.Clone(g.retryable)
	}
	return nil
}

// GrantedChecks marks the destinations of a policy check that the network
// grant g covers as the proxy will decide them once the grant is approved:
// reached without a dialog, unless a forbid rule refuses them (a grant
// never overrides one). Under network off no grant applies (the evaluation
// refuses it), and outside the sandbox every check is already allow.
func GrantedChecks(checks []NetworkCheck, g sandbox.Grant, needsApproval bool) []NetworkCheck {
	if len(g.Network) == 0 {
		return checks
	}
	d := &NetworkDecider{}
	revoke := d.GrantHosts("check", g.Network)
	defer revoke()
	when := ""
	if needsApproval {
		when = " once the request is approved"
	}
	for i, c := range checks {
		forbidRule := c.Rule != nil && c.Rule.Decision == rules.Forbidden
		if c.Decision == rules.Allow || forbidRule {
			continue
		}
		if d.granted("check", netproxy.Destination{Host: c.Host, Port: c.Port}) {
			checks[i].Decision = rules.Allow
			checks[i].Reason = fmt.Sprintf("network to %s allowed: granted with the command%s", command.EscapeText(net.JoinHostPort(c.Host, strconv.Itoa(c.Port))), when)
		}
	}
	return checks
}

// grantCovers is sandbox.Grant.Covers with network entries read as the
// proxy reads them: a host with any port covers that host on every port.
// Both grants are canonical (checkNetworkGrant).
func grantCovers(have, want sandbox.Grant) bool {
	paths := want
	paths.Network = nil
	if !have.Covers(paths) {
		return false
	}
	for _, n := range want.Network {
		host, _, err := grantEntry(n)
		if err != nil || !(slices.Contains(have.Network, n) || slices.Contains(have.Network, grantHostPort(host, 0))) {
			return false
		}
	}
	return true
}
