package approvals

import (
	"net"
	"strconv"

	"github.com/wardenhq/warden/sandbox/netproxy"
)

// runGrant is the network part of a run's approved grant: hosts, each with
// any port or one port.
type runGrant struct {
	hosts map[string][]int // host → ports; an empty list is any port
}

// GrantHosts lets the run runID reach hosts without a dialog: the network
// part of an approved grant ("pypi.org" any port, "pypi.org:443" one).
// Forbid rules still win. An entry that is neither is ignored (grants are
// checked when they are resolved). The returned function revokes it; call
// it when the run ends.
func (d *NetworkDecider) GrantHosts(runID string, hosts []string) (revoke func()) {
	g := &runGrant{hosts: map[string][]int{}}
	for _, h := range hosts {
		host, port := h, 0
		if hh, p, err := net.SplitHostPort(h); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil || n <= 0 || n > 65535 {
				continue
			}
			host, port = hh, n
		}
		host = NormalizeHost(host)
		if host == "" || nonCanonicalIP(host) {
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
