package rules

import (
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkAmendmentLine is the network_rule line "Always allow `<host>`"
// appends to default.rules: the host and the protocol the connection used.
func NetworkAmendmentLine(host string, protocol netproxy.Protocol) string {
	return fmt.Sprintf("network_rule(host=%s, protocol=%s, decision=\"allow\")", starlarkQuote(host), starlarkQuote(ruleProtocol(protocol)))
}

// AppendNetworkAllowRule persists an allow rule for host and protocol in
// dir/default.rules, under the same lock and atomic write as prefix-rule
// amendments. The host must be one exact host, already normalized (no
// wildcard, port or space): it names what the user saw in the dialog,
// nothing wider.
func AppendNetworkAllowRule(dir, host string, protocol netproxy.Protocol) (bool, error) {
	if _, err := NetworkRuleHost(host); err != nil {
		return false, fmt.Errorf("always allow: %w", err)
	}
	if !ValidRuleHost(host) {
		return false, fmt.Errorf("always allow: host %q cannot be written as a rule", host)
	}
	if _, err := networkProtocol(ruleProtocol(protocol)); err != nil {
		return false, fmt.Errorf("always allow: %w", err)
	}
	return appendRuleLine(dir, NetworkAmendmentLine(host, protocol))
}

// AddNetworkAllow puts a just-persisted network allow rule into force
// without waiting for the reload.
func (b *RuleBook) AddNetworkAllow(host string, protocol netproxy.Protocol, source string) {
	r := NetworkRule{Host: NormalizeHost(host), Protocol: ruleProtocol(protocol), Decision: Allow, Source: filepath.Base(source), File: source}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.good {
		return // no good set: the reload that follows the write brings it
	}
	n := b.set.With(nil)
	n.Network = append(append([]NetworkRule(nil), b.set.Network...), r)
	b.set = n
}
