package approvals

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"
)

// Grants: a request may carry additional permissions (sandbox.Grant), the
// model's sandbox_permissions = with_additional_permissions. The evaluator
// resolves them against the sandbox (ResolveGrant), adds their risk to the
// command's, and asks unless an allow rule already carries a grant that
// covers them; an approval runs the command in the sandbox plus exactly
// that grant, never outside it. Session approvals are keyed per grant
// entry, so a later request for a subset is remembered and one for more
// asks again.

// Policy is the sandbox.Policy a sandboxed attempt under s runs with. Every
// writable root is listed in s (SandboxFor puts $TMPDIR and /tmp there when
// they are), so the sandbox adds none of its own.
func (s Sandbox) Policy() sandbox.Policy {
	return sandbox.Policy{Mode: sandbox.Mode(s.Mode), Network: s.Network,
		Workspace: s.Workspace, WritableRoots: s.WritableRoots,
		ExcludeTmpdir: true, ExcludeSlashTmp: true, ProtectedPaths: s.ProtectedPaths, HomeWritable: s.HomeWritable,
		Reads: s.Reads, Caches: s.Caches}
}

// DescribeGrant is what g adds, in words for a heading, a reason or the
// model: "write access to ~/src, read access to /opt/data". What stays
// held inside is said once, on the dialog's sandbox line
// (DescribeGrantHeld).
func (s Sandbox) DescribeGrant(g sandbox.Grant) string {
	return strings.Join(g.Describe(s.Policy().Home()), ", ")
}

// DescribeGrantHeld is DescribeGrant with what stays read-only inside each
// directory g makes writable: "write access to ~/src (stays read-only
// inside: 2 repositories (a/.git, b/.git), .vscode in b), read access to
// /opt/data".
func (s Sandbox) DescribeGrantHeld(g sandbox.Grant) string {
	pol := s.Policy()
	parts := g.Describe(pol.Home())
	for i, w := range g.Write {
		if held := grantHeld(pol, g, w); held != "" {
			parts[i] += " (stays read-only inside: " + held + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// heldInside is what stays read-only inside w, a directory g makes
// writable under pol (sandbox.Held).
func heldInside(pol sandbox.Policy, g sandbox.Grant, w string) (sandbox.Held, error) {
	wider, err := pol.WithGrant(g)
	if err != nil {
		return sandbox.Held{}, err
	}
	return wider.HeldInside(w)
}

// grantHeld is heldInside in words, "" when nothing is held or it cannot
// be told (grantRisk says so).
func grantHeld(pol sandbox.Policy, g sandbox.Grant, w string) string {
	h, err := heldInside(pol, g, w)
	if err != nil {
		return ""
	}
	return h.String()
}

// grantKeys are the session keys of a command run with grant g: one per
// entry, each naming the command, so "Allow for session" remembers every
// entry and a later request is remembered only when all of its entries are
// (host:port also when the host was remembered on any port).
func grantKeys(argv []string, cwd string, s Sandbox, g sandbox.Grant) []string {
	base := sandboxKey(s, false)
	var keys []string
	key := func(kind, v string) string { return CommandKey(argv, cwd, base+" +"+kind+" "+v) }
	for _, w := range g.Write {
		keys = append(keys, key("write", w))
	}
	for _, r := range g.Read {
		keys = append(keys, key("read", r))
	}
	for _, n := range g.Network {
		k := key("network", n)
		if host, port, err := grantEntry(n); err == nil && port != 0 {
			// The proxy lets a grant for the host on any port through on
			// this one too: so does a session approval of it.
			k = orKeys(k, key("network", grantHostPort(host, 0)))
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return []string{CommandKey(argv, cwd, base)}
	}
	return keys
}

// grantRisk is the risk of giving g: write or read access to /, the home
// directory or a directory above it, or to anything holding or inside a
// credential store, is high (the dialog puts Deny first and remembers
// nothing); any other write is medium; any other read low. Network is
// graded per host as the network dialog grades it (networkGrantRisk), with
// the remotes of the repository at cwd.
func grantRisk(pol sandbox.Policy, g sandbox.Grant, cwd string) (risk.Level, []string) {
	home := pol.Home()
	level := risk.Low
	var facts []string
	note := func(l risk.Level, f string) {
		level = max(level, l)
		facts = append(facts, f)
	}
	broad := func(p string) bool {
		return p == "/" || (home != "" && (p == home || strings.HasPrefix(home, p+string(filepath.Separator))))
	}
	system := func(p string) bool {
		if p == "/var/tmp" || strings.HasPrefix(p, "/var/tmp/") {
			return false // scratch space, like /tmp
		}
		for _, d := range risk.SystemDirs {
			if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
				return true
			}
		}
		return strings.Count(p, string(filepath.Separator)) == 1 // a top-level directory
	}
	show := func(p string) string { return tildeShow(home, p) }
	// What stays held inside is on the dialog's sandbox line; a fact here
	// only when it raises the risk (other projects, or it cannot be told).
	for _, w := range g.Write {
		held, err := heldInside(pol, g, w)
		switch {
		case err != nil:
			note(risk.High, fmt.Sprintf("grants write access to %s; what stays read-only inside cannot be told (%v)", show(w), err))
		case broad(w):
			note(risk.High, "grants write access to "+show(w)+": the whole home directory or more")
		case system(w):
			note(risk.High, "grants write access to "+show(w)+": a system directory")
		case len(held.Projects) > 0:
			note(risk.High, fmt.Sprintf("grants write access to %s, which holds other projects (%s): their other files become writable", show(w), heldList(held.Projects)))
		default:
			if hid, ok := pol.ContainsHidden(w); ok {
				note(risk.High, fmt.Sprintf("grants write access to %s, which holds a credential store (%s)", show(w), show(hid)))
			} else {
				note(risk.Medium, "grants write access to "+show(w)+" (outside the writable roots)")
			}
		}
	}
	for _, r := range g.Read {
		if hid, ok := pol.HiddenBy(r); ok {
			note(risk.High, fmt.Sprintf("grants read access to %s inside the credential store %s, which the sandbox hides", show(r), show(hid)))
			continue
		}
		if broad(r) {
			note(risk.High, "grants read access to "+show(r)+": the whole home directory or more (credential stores stay hidden)")
			continue
		}
		note(risk.Low, "grants read access to "+show(r))
	}
	if len(g.Network) > 0 {
		remotes := slices.Sorted(maps.Keys(setOf(risk.RepoRemoteHosts(cwd))))
		for _, n := range g.Network {
			note(networkGrantRisk(n, remotes))
		}
	}
	return level, facts
}

// heldList joins names for a fact, up to 8 and how many more.
func heldList(names []string) string {
	if len(names) <= 8 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
}

func tildeShow(home, p string) string {
	if home != "" && home != "/" && (p == home || strings.HasPrefix(p, home+string(filepath.Separator))) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}

// addGrantRisk folds the grant's risk into the command's: the level is the
// higher of the two, the grant's facts come first.
func addGrantRisk(r *risk.Risk, pol sandbox.Policy, g sandbox.Grant, cwd string) {
	level, facts := grantRisk(pol, g, cwd)
	if level > r.Level {
		r.Level = level
		r.Summary = facts[0]
	}
	r.Facts = append(facts, r.Facts...)
}

// resolveAsked resolves the request's grant against its sandbox. A grant
// for a run without a sandbox adds nothing; network grants need the proxy
// (sandbox.ErrNetworkGrant when the network is off).
func resolveAsked(req CommandRequest) (sandbox.Grant, error) {
	if req.Grant.IsZero() || !req.Sandbox.Restricted() {
		return sandbox.Grant{}, nil
	}
	g, err := req.Sandbox.Policy().ResolveGrant(req.Grant, req.Cwd)
	if err == nil {
		g, err = usableNetwork(req.Sandbox.Policy(), g)
	}
	if err != nil {
		return sandbox.Grant{}, fmt.Errorf("additional permissions refused: %w", err)
	}
	return g, nil
}

// usableNetwork checks a resolved grant's network entries and writes them
// canonically (checkNetworkGrant); they need the proxy, so under network
// off a grant holding any is refused (sandbox.ErrNetworkGrant).
func usableNetwork(pol sandbox.Policy, g sandbox.Grant) (sandbox.Grant, error) {
	g, err := checkNetworkGrant(g)
	if err == nil && len(g.Network) > 0 && pol.NetworkMode() == sandbox.NetworkOff {
		err = sandbox.ErrNetworkGrant
	}
	return g, err
}

// applyGrants sets e.Grant: the matched allow rules' grant when every
// command of the line is allowed by rules (a rule's grant is the user's
// own), plus the request's grant; e.GrantAsked when the rules do not cover
// the request.
func applyGrants(req CommandRequest, e *Evaluation, asked sandbox.Grant, allAllowed bool, matched []*rules.Rule) {
	rg := rules.RuleGrant(matched)
	if rg != nil && allAllowed && req.Sandbox.Restricted() {
		// Exact: a saved path that became a link is not followed.
		g, err := req.Sandbox.Policy().ResolveGrantExact(*rg)
		if err == nil {
			g, err = usableNetwork(req.Sandbox.Policy(), g)
		}
		if err != nil {
			e.Reason += "; the rule's additional permissions were not applied: " + err.Error()
		} else {
			e.Grant = g
			e.Reason += "; in the sandbox with " + req.Sandbox.DescribeGrant(g)
		}
	}
	if !asked.IsZero() && !grantCovers(e.Grant, asked) {
		e.Grant = e.Grant.Union(asked)
		e.GrantAsked = true
	}
}

// withWrites is s with more writable roots (a grant's directories).
func (s Sandbox) withWrites(dirs []string) Sandbox {
	if len(dirs) > 0 {
		s.WritableRoots = append(append([]string(nil), s.WritableRoots...), dirs...)
	}
	return s
}

// ruleWrites are the directories the allow rules' grants would make
// writable for this command line (every command allowed by rules, one at
// least with a grant), resolved; nil otherwise.
func (ev *Evaluator) ruleWrites(req CommandRequest, a *command.Analysis) []string {
	if ev.Rules == nil || len(a.Segments) == 0 || !req.Sandbox.Restricted() {
		return nil
	}
	var matched []*rules.Rule
	for _, seg := range a.Segments {
		m := ev.Rules.Match(seg.Argv)
		if !allowsOnly(m) {
			return nil
		}
		matched = append(matched, m...)
	}
	rg := rules.RuleGrant(matched)
	if rg == nil {
		return nil
	}
	g, err := req.Sandbox.Policy().ResolveGrantExact(sandbox.Grant{Write: rg.Write})
	if err != nil {
		return nil
	}
	return g.Write
}
