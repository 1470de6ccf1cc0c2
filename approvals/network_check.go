package approvals

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkCheck is what `warden policy check` reports for one destination a
// command names: what the network mode, the rules and the policy decide.
type NetworkCheck struct {
	Host     string             `json:"host"`
	Port     int                `json:"port"`
	Protocol string             `json:"protocol"`
	Decision rules.Decision     `json:"decision"`
	Rule     *rules.NetworkRule `json:"rule"`
	Reason   string             `json:"reason"`
	Facts    []string           `json:"facts"`
}

// CheckNetwork decides each destination the analysis found in a command:
// under off none is reachable, under on (or outside the sandbox) all are,
// under ask the rules and the policy decide what a connection would meet
// before any dialog. The port and protocol come from the URL when the
// command names one, else HTTPS on 443 (what package managers use).
func CheckNetwork(ruleSet *rules.RuleSet, policy Policy, mode sandbox.NetworkMode, unsandboxed bool, argv []string, assessed risk.Risk, cwd string) []NetworkCheck {
	dests := commandDestinations(argv, assessed.Hosts())
	remotes := risk.RepoRemoteHosts(cwd)
	out := make([]NetworkCheck, 0, len(dests))
	for _, d := range dests {
		c := NetworkCheck{Host: d.Host, Port: d.Port, Protocol: string(d.Protocol), Facts: risk.HostFacts(d.Host, remotes)}
		hp := command.EscapeText(HostPort(d))
		switch {
		case unsandboxed:
			c.Decision, c.Reason = rules.Allow, "network to "+hp+" is not mediated: the command runs outside the sandbox"
		case mode == sandbox.NetworkOff:
			c.Decision, c.Reason = rules.Forbidden, "network to "+hp+" refused: network_access is off"
		case mode == sandbox.NetworkOn:
			c.Decision, c.Reason = rules.Allow, "network to "+hp+" allowed: network_access is on (no proxy, no questions)"
		default:
			ev := EvaluateNetwork(ruleSet, policy, d)
			c.Decision, c.Rule, c.Reason = ev.Decision, ev.Rule, ev.Reason
		}
		out = append(out, c)
	}
	return out
}

// commandDestinations pairs each host the analysis found with the port and
// protocol of a URL naming it in the command, if any.
func commandDestinations(argv []string, hosts []string) []netproxy.Destination {
	text := strings.Join(argv, " ")
	byHost := map[string]netproxy.Destination{}
	var urls []string
	if strings.Contains(text, "://") {
		urls = risk.UrlInText().FindAllString(text, -1)
	}
	for _, u := range urls {
		if d, ok := urlDestination(u); ok {
			if _, seen := byHost[d.Host]; !seen {
				byHost[d.Host] = d
			}
		}
	}
	for _, w := range strings.Fields(text) {
		if !strings.Contains(w, "@") || strings.Contains(w, "://") {
			continue
		}
		if m := gitfacts.ScpLikeURL().FindStringSubmatch(w); m != nil {
			h := rules.NormalizeHost(m[1])
			if _, seen := byHost[h]; !seen {
				byHost[h] = netproxy.Destination{Host: h, Port: 22, Protocol: netproxy.SOCKS5}
			}
		}
	}
	var out []netproxy.Destination
	seen := map[string]bool{}
	for _, h := range hosts {
		h = rules.NormalizeHost(h)
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		d, ok := byHost[h]
		if !ok {
			d = netproxy.Destination{Host: h, Port: 443, Protocol: netproxy.HTTPS}
		}
		out = append(out, d)
	}
	return out
}

// urlDestination reads the destination a URL connects to through the
// proxy: http is proxied HTTP, https a CONNECT tunnel, anything else
// (ssh, git) SOCKS5.
func urlDestination(raw string) (netproxy.Destination, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return netproxy.Destination{}, false
	}
	d := netproxy.Destination{Host: rules.NormalizeHost(u.Hostname())}
	defaults := map[string]int{"http": 80, "https": 443, "ssh": 22, "git": 9418, "ftp": 21, "git+ssh": 22, "ssh+git": 22}
	switch strings.ToLower(u.Scheme) {
	case "http":
		d.Protocol = netproxy.HTTP
	case "https":
		d.Protocol = netproxy.HTTPS
	default:
		d.Protocol = netproxy.SOCKS5
	}
	d.Port = defaults[strings.ToLower(u.Scheme)]
	if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p < 65536 {
		d.Port = p
	}
	if d.Port == 0 {
		return netproxy.Destination{}, false
	}
	return d, true
}
