package approvals

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// TestNetworkRuleWarden: Warden's additions to Codex's network_rule: a
// leading "*." names subdomains, the protocol may be left out (any) and may
// be spelled as the proxy spells it (socks5-tcp); the decision stays
// required. Every bad rule fails the load at its file:line.
func TestNetworkRuleWarden(t *testing.T) {
	p := mustParse(t, `
network_rule(host="*.example.com", decision="allow")
network_rule(host="pypi.org", protocol="socks5-tcp", decision="prompt", justification="ssh tunnels")
network_rule(host="*.Corp.Example.", protocol="any", decision="forbidden")
`)
	type nr struct{ host, proto, decision, src string }
	var got []nr
	for _, r := range p.NetworkRules {
		got = append(got, nr{r.Host, r.Protocol, r.Decision.String(), r.Source})
	}
	want := []nr{
		{"*.example.com", "any", "allow", "t.rules:2"},
		{"pypi.org", "socks5_tcp", "prompt", "t.rules:3"},
		{"*.corp.example", "any", "forbidden", "t.rules:4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules\n got %v\nwant %v", got, want)
	}

	bad := []struct{ body, want string }{
		{"\n\nnetwork_rule(host=\"*\", decision=\"allow\")\n", "t.rules:3: network_rule host \"*\""},
		{"network_rule(host=\"*.\", decision=\"allow\")\n", "t.rules:1: network_rule host \"*.\": name a host"},
		{"network_rule(host=\"a.*.example.com\", decision=\"allow\")\n", "the only wildcard is a leading"},
		{"network_rule(host=\"*example.com\", decision=\"allow\")\n", "the only wildcard is a leading"},
		{"network_rule(host=\"**.example.com\", decision=\"allow\")\n", "the only wildcard is a leading"},
		{"network_rule(host=\"*..example.com\", decision=\"allow\")\n", "must be followed by a domain"},
		{"network_rule(host=\"*.10.0.0.1\", decision=\"allow\")\n", "cannot stand before an IP address"},
		{"network_rule(host=\"user@example.com\", decision=\"allow\")\n", "without scheme or path"},
		{"network_rule(host=\"a:b:c\", decision=\"allow\")\n", "neither a host name nor an IP address"},
		{"network_rule(host='ex\"ample.com', decision=\"allow\")\n", "holds characters no host name has"},
		{"network_rule(host=\"example.com;rm\", decision=\"allow\")\n", "holds characters no host name has"},
		{"network_rule(host=\"example.com\", protocol=\"ftp\", decision=\"allow\")\n", "t.rules:1: network_rule protocol \"ftp\""},
		{"network_rule(host=\"example.com\", protocol=\"ANY\", decision=\"allow\")\n", "protocol"},
		{"network_rule(host=\"example.com\", decision=\"maybe\")\n", "t.rules:1: network_rule: unknown decision \"maybe\""},
		{"network_rule(host=\"example.com\")\n", "missing argument for decision"},
		{"\nnetwork_rule(host=\"example.com\", decision=\"\")\n", "t.rules:2: network_rule: missing argument for decision"},
	}
	for _, c := range bad {
		_, err := rules.ParseRules("t.rules", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.body, err, c.want)
		}
	}
}

// TestNetworkRuleMatches: "*.example.com" is every subdomain and not the
// apex nor a look-alike; a protocol narrows; IP literals compare as
// addresses.
func TestNetworkRuleMatches(t *testing.T) {
	wild := rules.NetworkRule{Host: "*.example.com", Protocol: rules.ProtocolAny}
	https := rules.NetworkRule{Host: "example.com", Protocol: "https"}
	socks := rules.NetworkRule{Host: "example.com", Protocol: "socks5_tcp"}
	v6 := rules.NetworkRule{Host: "::1", Protocol: rules.ProtocolAny}
	cases := []struct {
		r     rules.NetworkRule
		host  string
		proto netproxy.Protocol
		want  bool
	}{
		{wild, "a.example.com", netproxy.HTTPS, true},
		{wild, "a.b.example.com", netproxy.SOCKS5, true},
		{wild, "A.Example.COM.", netproxy.HTTP, true},
		{wild, "example.com", netproxy.HTTPS, false},          // not the apex
		{wild, "badexample.com", netproxy.HTTPS, false},       // not a look-alike
		{wild, "example.com.evil.net", netproxy.HTTPS, false}, // not a prefix
		{https, "example.com", netproxy.HTTPS, true},
		{https, "example.com", netproxy.HTTP, false},
		{https, "www.example.com", netproxy.HTTPS, false},
		{socks, "example.com", netproxy.SOCKS5, true},
		{socks, "example.com", netproxy.HTTPS, false},
		{v6, "0:0::1", netproxy.HTTP, true},
		{v6, "::2", netproxy.HTTP, false},
	}
	for _, c := range cases {
		if got := c.r.Matches(c.host, c.proto); got != c.want {
			t.Errorf("%s/%s matches %s/%s = %v, want %v", c.r.Host, c.r.Protocol, c.host, c.proto, got, c.want)
		}
	}
}

func dst(host string, port int, p netproxy.Protocol) netproxy.Destination {
	return netproxy.Destination{Host: host, Port: port, Protocol: p}
}

// TestEvaluateNetworkOrder: the strictest matching rule wins whatever the
// file order; what no rule settles goes to the policy: never refuses
// without asking, granular may reject, the others ask.
func TestEvaluateNetworkOrder(t *testing.T) {
	p := mustParse(t, `
network_rule(host="*.example.com", decision="allow")
network_rule(host="evil.example.com", protocol="https", decision="forbidden", justification="exfil endpoint")
network_rule(host="ask.example.com", decision="prompt")
network_rule(host="pypi.org", protocol="https", decision="allow")
`)
	rs := &rules.RuleSet{Network: p.NetworkRules}
	onReq := Policy{Ask: OnRequest}
	cases := []struct {
		name   string
		policy Policy
		d      netproxy.Destination
		want   rules.Decision
		reason string
	}{
		{"wildcard allow", onReq, dst("cdn.example.com", 443, netproxy.HTTPS), rules.Allow, "allowed by rule at t.rules:2"},
		{"forbidden beats allow", onReq, dst("evil.example.com", 443, netproxy.HTTPS), rules.Forbidden, "network to evil.example.com:443 forbidden by rule at t.rules:3: exfil endpoint"},
		{"forbid is https only", onReq, dst("evil.example.com", 80, netproxy.HTTP), rules.Allow, "t.rules:2"},
		{"prompt beats allow", onReq, dst("ask.example.com", 443, netproxy.HTTPS), rules.Prompt, "the rule at t.rules:4 asks"},
		{"apex not covered", onReq, dst("example.com", 443, netproxy.HTTPS), rules.Prompt, "no network_rule covers example.com:443"},
		{"protocol narrows", onReq, dst("pypi.org", 80, netproxy.HTTP), rules.Prompt, "no network_rule"},
		{"never refuses", Policy{Ask: Never}, dst("example.com", 443, netproxy.HTTPS), rules.Forbidden, "network to example.com:443 refused: approval policy is never"},
		{"never keeps allow rules", Policy{Ask: Never}, dst("pypi.org", 443, netproxy.HTTPS), rules.Allow, "t.rules:5"},
		{"never refuses a prompt rule", Policy{Ask: Never}, dst("ask.example.com", 443, netproxy.HTTPS), rules.Forbidden, "approval policy is never"},
		{"untrusted asks", Policy{Ask: Untrusted}, dst("example.com", 443, netproxy.HTTPS), rules.Prompt, ""},
		{"on-failure asks", Policy{Ask: OnFailure}, dst("example.com", 443, netproxy.HTTPS), rules.Prompt, ""},
		{"granular rejects network", Policy{Ask: Granular, Reject: RejectCategories{Network: true}}, dst("example.com", 443, netproxy.HTTPS), rules.Forbidden, "granular"},
		{"granular asks otherwise", Policy{Ask: Granular, Reject: RejectCategories{Patches: true}}, dst("example.com", 443, netproxy.HTTPS), rules.Prompt, ""},
		{"granular rules rejects prompt rules", Policy{Ask: Granular, Reject: RejectCategories{Rules: true}}, dst("ask.example.com", 443, netproxy.HTTPS), rules.Forbidden, "granular"},
		{"IPv6 forbidden literal", onReq, dst("::1", 443, netproxy.HTTPS), rules.Prompt, "[::1]:443"},
	}
	for _, c := range cases {
		ev := EvaluateNetwork(rs, c.policy, c.d)
		if ev.Decision != c.want || !strings.Contains(ev.Reason, c.reason) {
			t.Errorf("%s: %s %q, want %s containing %q", c.name, ev.Decision, ev.Reason, c.want, c.reason)
		}
	}
	if ev := EvaluateNetwork(nil, onReq, dst("example.com", 443, netproxy.HTTPS)); ev.Decision != rules.Prompt {
		t.Errorf("no rules: %s, want prompt", ev.Decision)
	}
}

// TestNetworkRulesWorkspaceTightenOnly: an untrusted workspace's allow rule
// is ignored with a warning (attack: the repository allows its own
// exfiltration host), while its forbid rule and the user's allow rule hold
// (twins).
func TestNetworkRulesWorkspaceTightenOnly(t *testing.T) {
	user, ws := t.TempDir(), t.TempDir()
	writeRules(t, user, "u.rules", `network_rule(host="pypi.org", decision="allow")`+"\n")
	writeRules(t, ws, "w.rules", `network_rule(host="exfil.example", decision="allow")
network_rule(host="pypi.org", protocol="http", decision="forbidden")
`)
	rs, err := rules.LoadRules([]rules.RuleSource{{Dir: user, Trust: rules.TrustFull}, {Dir: ws, Trust: rules.TrustTightenOnly}})
	if err != nil {
		t.Fatal(err)
	}
	onReq := Policy{Ask: OnRequest}
	if ev := EvaluateNetwork(rs, onReq, dst("exfil.example", 443, netproxy.HTTPS)); ev.Decision != rules.Prompt {
		t.Errorf("untrusted workspace allowed its own host: %s %s", ev.Decision, ev.Reason)
	}
	if ev := EvaluateNetwork(rs, onReq, dst("pypi.org", 443, netproxy.HTTPS)); ev.Decision != rules.Allow {
		t.Errorf("user allow rule: %s %s", ev.Decision, ev.Reason)
	}
	if ev := EvaluateNetwork(rs, onReq, dst("pypi.org", 80, netproxy.HTTP)); ev.Decision != rules.Forbidden {
		t.Errorf("workspace forbid rule: %s %s", ev.Decision, ev.Reason)
	}
	if len(rs.Warnings) != 1 || !strings.Contains(rs.Warnings[0], "w.rules:1: network allow rule ignored") {
		t.Errorf("warnings = %q", rs.Warnings)
	}
	// Trusted, the same allow rule counts.
	rs, err = rules.LoadRules([]rules.RuleSource{{Dir: ws, Trust: rules.TrustFull}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := EvaluateNetwork(rs, onReq, dst("exfil.example", 443, netproxy.HTTPS)); ev.Decision != rules.Allow {
		t.Errorf("trusted workspace allow rule: %s", ev.Decision)
	}
}
