package approvals

import (
	"fmt"
	"net"
	"strconv"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkEvaluation is what the rules and the approval policy say about one
// destination before anyone is asked.
type NetworkEvaluation struct {
	// Decision is allow (a rule allows it), prompt (the user must be asked)
	// or forbidden (a rule or the policy refuses it).
	Decision rules.Decision `json:"decision"`
	// Rule is the rule that decided, or nil when none matched.
	Rule *rules.NetworkRule `json:"rule"`
	// Reason is one line for the refused command, the dialog or the check.
	Reason string `json:"reason"`
	// High marks a destination that is never remembered: a cloud metadata
	// service or another link-local address.
	High bool `json:"-"`
}

// HostPort is how reasons name a destination: host:port.
func HostPort(d netproxy.Destination) string {
	return net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
}

// EvaluateNetwork decides a destination by the rules (the strictest matching
// rule wins: forbidden, then prompt, then allow) and then by the approval
// policy for what is left to ask: never refuses, granular may reject network
// prompts (or prompts a rule caused), the others ask. rules may be nil.
func EvaluateNetwork(ruleSet *rules.RuleSet, policy Policy, dest netproxy.Destination) NetworkEvaluation {
	dest.Host = rules.NormalizeHost(dest.Host)
	hp := command.EscapeText(HostPort(dest))
	var best *rules.NetworkRule
	for _, r := range ruleSet.NetworkRules() {
		if !r.Matches(dest.Host, dest.Protocol) {
			continue
		}
		if best == nil || r.Decision > best.Decision {
			r := r
			best = &r
		}
	}
	_, high := risk.HostReach(dest.Host)
	ev := NetworkEvaluation{Decision: rules.Prompt, Rule: best, High: high}
	switch {
	case best != nil && best.Decision == rules.Forbidden:
		ev.Decision = rules.Forbidden
		ev.Reason = fmt.Sprintf("network to %s forbidden by rule at %s%s", hp, best.Source, justified(best.Justification))
		return ev
	case best != nil && best.Decision == rules.Allow:
		ev.Decision = rules.Allow
		ev.Reason = fmt.Sprintf("network to %s allowed by rule at %s", hp, best.Source)
		return ev
	case best != nil:
		ev.Reason = fmt.Sprintf("the rule at %s asks about %s%s", best.Source, hp, justified(best.Justification))
	default:
		ev.Reason = fmt.Sprintf("no network_rule covers %s", hp)
	}
	switch {
	case policy.Ask == Never:
		ev.Decision = rules.Forbidden
		ev.Reason = fmt.Sprintf("network to %s refused: approval policy is never", hp)
	case policy.rejects(categoryNetwork) || best != nil && policy.rejects(categoryRules):
		ev.Decision = rules.Forbidden
		ev.Reason = fmt.Sprintf("network to %s refused: the granular approval policy rejects network prompts", hp)
	}
	return ev
}

func justified(j string) string {
	if j == "" {
		return ""
	}
	return ": " + command.EscapeText(j)
}
