package rules

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"unicode"

	"go.starlark.net/starlark"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkRule is a network_rule: what to do when a sandboxed command connects
// to Host with Protocol. Host is normalized (lower case, no port, no trailing
// dot); "*.example.com" stands for every subdomain of example.com, not
// example.com itself (a Warden extension: Codex names one host). Protocol is
// one of NetworkProtocols, "any" when the rule left it out.
type NetworkRule struct {
	Host          string   `json:"host"`
	Protocol      string   `json:"protocol"`
	Decision      Decision `json:"decision"`
	Justification string   `json:"justification,omitempty"`
	Source        string   `json:"source"` // file:line of the network_rule call
	// File is the rules file it came from, absolute ("" for one built in
	// memory): see Rule.File.
	File string `json:"-"`
}

// ProtocolAny matches every protocol; it is what a network_rule without a
// protocol means.
const ProtocolAny = "any"

// NetworkProtocols are the protocols a network_rule names, after Codex's
// aliases (https_connect and http-connect are https) and the proxy's
// spelling (socks5-tcp is socks5_tcp).
var NetworkProtocols = []string{"http", "https", "socks5_tcp", "socks5_udp", ProtocolAny}

// networkProtocol maps a protocol as written to its canonical name.
func networkProtocol(raw string) (string, error) {
	switch raw {
	case "http", "https", "socks5_tcp", "socks5_udp", ProtocolAny:
		return raw, nil
	case "https_connect", "http-connect":
		return "https", nil
	case "socks5-tcp":
		return "socks5_tcp", nil
	case "socks5-udp":
		return "socks5_udp", nil
	}
	return "", fmt.Errorf("network_rule protocol %q: want one of http, https (or https_connect, http-connect), socks5_tcp (or socks5-tcp), socks5_udp, any", raw)
}

// ruleProtocol is the rule protocol name of a protocol the proxy saw.
func ruleProtocol(p netproxy.Protocol) string {
	switch p {
	case netproxy.HTTP:
		return "http"
	case netproxy.HTTPS:
		return "https"
	case netproxy.SOCKS5:
		return "socks5_tcp"
	}
	return string(p)
}

// Matches reports whether the rule covers host (normalized, as in
// netproxy.Destination) reached with protocol.
func (r NetworkRule) Matches(host string, protocol netproxy.Protocol) bool {
	if r.Protocol != ProtocolAny && r.Protocol != ruleProtocol(protocol) {
		return false
	}
	host = NormalizeHost(host)
	if suffix, ok := strings.CutPrefix(r.Host, "*."); ok {
		return strings.HasSuffix(host, "."+suffix) && len(host) > len(suffix)+1
	}
	if host == r.Host {
		return true
	}
	// IP literals compare as addresses: ::1 is 0:0::1.
	a, b := net.ParseIP(host), net.ParseIP(r.Host)
	return a != nil && b != nil && a.Equal(b)
}

// NormalizeHost lower-cases a host name and drops a trailing dot and IPv6
// brackets, the form rules and session keys use.
func NormalizeHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
	return strings.ToLower(strings.TrimRight(h, "."))
}

// networkRule is network_rule(host, protocol?, decision, justification?).
// decision "deny" is "forbidden", as in Codex; the decision must be written
// (a rule that opens the network says so), the protocol defaults to any.
func (p *ParsedRules) networkRule(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var host, decision string
	protocol := ProtocolAny
	var justification starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "host", &host, "protocol?", &protocol, "decision", &decision, "justification?", &justification); err != nil {
		return nil, err
	}
	if decision == "" {
		return nil, fmt.Errorf("%s: missing argument for decision (allow, prompt or forbidden)", b.Name())
	}
	proto, err := networkProtocol(protocol)
	if err != nil {
		return nil, err
	}
	if decision == "deny" {
		decision = "forbidden"
	}
	d, err := ParseDecision(decision)
	if err != nil {
		return nil, fmt.Errorf("network_rule: %w (or \"deny\")", err)
	}
	just, err := justificationArg(justification)
	if err != nil {
		return nil, err
	}
	h, err := NetworkRuleHost(host)
	if err != nil {
		return nil, err
	}
	p.NetworkRules = append(p.NetworkRules, NetworkRule{Host: h, Protocol: proto, Decision: d, Justification: just, Source: sourceOf(thread)})
	return starlark.None, nil
}

// NetworkRuleHost normalizes a network_rule host as Codex does: a host name
// or IP literal, optionally with a port (dropped) or in [brackets] for IPv6,
// lower-cased, without a trailing dot. A leading "*." names the subdomains
// of what follows; any other wildcard, a scheme, a path or a space is an
// error.
func NetworkRuleHost(raw string) (string, error) {
	host := strings.TrimSpace(raw)
	if host == "" {
		return "", errors.New("network_rule host is empty")
	}
	if strings.Contains(host, "://") || strings.ContainsAny(host, "/?#@") {
		return "", fmt.Errorf("network_rule host %q must be a host name or IP address, without scheme or path (or user@)", raw)
	}
	if rest, ok := strings.CutPrefix(host, "["); ok {
		inside, after, ok := strings.Cut(rest, "]")
		if !ok {
			return "", fmt.Errorf("network_rule host %q: unclosed [ in an IPv6 address", raw)
		}
		if port, hasPort := strings.CutPrefix(after, ":"); after != "" && (!hasPort || !command.IsDigits(port)) {
			return "", fmt.Errorf("network_rule host %q: unexpected %q after the address", raw, after)
		}
		host = inside
	} else if strings.Count(host, ":") == 1 {
		if name, port, _ := strings.Cut(host, ":"); name != "" && command.IsDigits(port) {
			host = name
		}
	}
	host = strings.ToLower(strings.TrimSpace(strings.TrimRight(host, ".")))
	wild := strings.HasPrefix(host, "*.")
	rest := strings.TrimPrefix(host, "*.")
	switch {
	case host == "":
		return "", errors.New("network_rule host is empty")
	case strings.ContainsFunc(host, func(r rune) bool { return r == ' ' || command.HiddenRune(r) }):
		return "", fmt.Errorf("network_rule host %q holds spaces or control characters", raw)
	case host == "*":
		return "", fmt.Errorf("network_rule host %q: name a host or \"*.domain\"; a rule for every host is the network_access setting", raw)
	case strings.Contains(rest, "*"):
		return "", fmt.Errorf("network_rule host %q: the only wildcard is a leading \"*.\" (\"*.example.com\" is every subdomain of example.com)", raw)
	case wild && (rest == "" || strings.HasPrefix(rest, ".") || strings.Contains(rest, "..")):
		return "", fmt.Errorf("network_rule host %q: \"*.\" must be followed by a domain, as in \"*.example.com\"", raw)
	case wild && net.ParseIP(rest) != nil:
		return "", fmt.Errorf("network_rule host %q: a wildcard cannot stand before an IP address", raw)
	case strings.ContainsFunc(rest, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:%", r)
	}):
		return "", fmt.Errorf("network_rule host %q holds characters no host name has", raw)
	case !wild && strings.Contains(host, ":") && net.ParseIP(host) == nil:
		return "", fmt.Errorf("network_rule host %q is neither a host name nor an IP address", raw)
	}
	return host, nil
}

// ValidRuleHost reports whether host can be written as a network_rule as
// it is (what "Always allow" writes).
func ValidRuleHost(host string) bool {
	h, err := NetworkRuleHost(host)
	return err == nil && h == host && !strings.HasPrefix(h, "*.")
}
