package approvals

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
)

// This file holds Codex's two other rules functions, host_executable and
// network_rule, with Codex's semantics, so a Codex rules file means the same
// in Warden.

// hostExecutable is host_executable(name, paths): the absolute paths that
// may stand for a program name when a rule names it by its basename. The
// last definition of a name wins; paths=[] lets no path stand for it. Each
// path must be absolute (or ~/...) and end in the name itself.
func (p *ParsedRules) hostExecutable(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var paths *starlark.List
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "paths", &paths); err != nil {
		return nil, err
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("host_executable name %q must be a bare program name", name)
	}
	list := []string{}
	for i := 0; i < paths.Len(); i++ {
		raw, ok := starlark.AsString(paths.Index(i))
		if !ok {
			return nil, fmt.Errorf("host_executable(%q) paths must be strings, not %s", name, paths.Index(i).Type())
		}
		path, err := hostExecutablePath(raw)
		if err != nil {
			return nil, fmt.Errorf("host_executable(%q) path %q: %w", name, raw, err)
		}
		if filepath.Base(path) != name {
			return nil, fmt.Errorf("host_executable(%q) path %q must end in %q", name, raw, name)
		}
		if !contains(list, path) {
			list = append(list, path)
		}
	}
	p.HostExecutables[name] = list
	return starlark.None, nil
}

// hostExecutablePath reads a host_executable path: absolute, or ~/...
// under the user's home directory.
func hostExecutablePath(raw string) (string, error) {
	if rest, ok := strings.CutPrefix(raw, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", errors.New("~/ paths need a home directory, and there is none")
		}
		raw = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(raw) {
		return "", errors.New("must be an absolute path or start with ~/")
	}
	return filepath.Clean(raw), nil
}

// NetworkRule is a Codex network_rule: what to do when a command connects to
// Host with Protocol. Host is normalized (lower case, no port, no trailing
// dot); Protocol is one of NetworkProtocols.
type NetworkRule struct {
	Host          string   `json:"host"`
	Protocol      string   `json:"protocol"`
	Decision      Decision `json:"decision"`
	Justification string   `json:"justification,omitempty"`
	Source        string   `json:"source"` // file:line of the network_rule call
}

// NetworkProtocols are the protocols a network_rule names, after Codex's
// aliases (https_connect and http-connect are https).
var NetworkProtocols = []string{"http", "https", "socks5_tcp", "socks5_udp"}

// networkProtocol maps a protocol as written to its canonical name.
func networkProtocol(raw string) (string, error) {
	switch raw {
	case "http", "https", "socks5_tcp", "socks5_udp":
		return raw, nil
	case "https_connect", "http-connect":
		return "https", nil
	}
	return "", fmt.Errorf("network_rule protocol %q: want one of http, https (or https_connect, http-connect), socks5_tcp, socks5_udp", raw)
}

// networkRule is network_rule(host, protocol, decision, justification?).
// decision "deny" is "forbidden", as in Codex.
func (p *ParsedRules) networkRule(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var host, protocol, decision string
	var justification starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "host", &host, "protocol", &protocol, "decision", &decision, "justification?", &justification); err != nil {
		return nil, err
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
	h, err := networkRuleHost(host)
	if err != nil {
		return nil, err
	}
	p.NetworkRules = append(p.NetworkRules, NetworkRule{Host: h, Protocol: proto, Decision: d, Justification: just, Source: sourceOf(thread)})
	return starlark.None, nil
}

// networkRuleHost normalizes a network_rule host as Codex does: a host name
// or IP literal, optionally with a port (dropped) or in [brackets] for IPv6,
// lower-cased, without a trailing dot. Schemes, paths, wildcards and spaces
// are errors: a rule names one specific host.
func networkRuleHost(raw string) (string, error) {
	host := strings.TrimSpace(raw)
	if host == "" {
		return "", errors.New("network_rule host is empty")
	}
	if strings.Contains(host, "://") || strings.ContainsAny(host, "/?#") {
		return "", fmt.Errorf("network_rule host %q must be a host name or IP address, without scheme or path", raw)
	}
	if rest, ok := strings.CutPrefix(host, "["); ok {
		inside, after, ok := strings.Cut(rest, "]")
		if !ok {
			return "", fmt.Errorf("network_rule host %q: unclosed [ in an IPv6 address", raw)
		}
		if port, hasPort := strings.CutPrefix(after, ":"); after != "" && (!hasPort || !isDigits(port)) {
			return "", fmt.Errorf("network_rule host %q: unexpected %q after the address", raw, after)
		}
		host = inside
	} else if strings.Count(host, ":") == 1 {
		if name, port, _ := strings.Cut(host, ":"); name != "" && isDigits(port) {
			host = name
		}
	}
	host = strings.ToLower(strings.TrimSpace(strings.TrimRight(host, ".")))
	switch {
	case host == "":
		return "", errors.New("network_rule host is empty")
	case strings.Contains(host, "*"):
		return "", fmt.Errorf("network_rule host %q: wildcards are not allowed; name one specific host (as Codex requires)", raw)
	case strings.ContainsFunc(host, func(r rune) bool { return r == ' ' || hiddenRune(r) }):
		return "", fmt.Errorf("network_rule host %q holds spaces or control characters", raw)
	}
	return host, nil
}
