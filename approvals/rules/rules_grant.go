package rules

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"

	"github.com/wardenhq/warden/sandbox"
)

// Warden's extension to prefix_rule: additional_permissions = {"write":
// [...], "read": [...], "network": [...]} on an allow rule. A command the
// rule allows runs in the sandbox plus that grant (no rule takes a command
// out of the sandbox). Paths are absolute or start with ~/;
// they are checked against the sandbox (sandbox.Policy.ResolveGrant) each
// time the rule applies, so a path that became a link is not followed.

// grantArg reads a prefix_rule's additional_permissions.
func grantArg(v starlark.Value, d Decision) (*sandbox.Grant, error) {
	if v == starlark.None {
		return nil, nil
	}
	dict, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("additional_permissions must be a dict, not %s", v.Type())
	}
	if d != Allow {
		return nil, errors.New("additional_permissions is only for allow rules: it says what an allowed command may do in the sandbox")
	}
	var g sandbox.Grant
	for _, item := range dict.Items() {
		key, ok := starlark.AsString(item[0])
		if !ok {
			return nil, fmt.Errorf("additional_permissions keys are strings, not %s", item[0].Type())
		}
		list, ok := item[1].(*starlark.List)
		if !ok {
			return nil, fmt.Errorf("additional_permissions[%q] must be a list of strings, not %s", key, item[1].Type())
		}
		var vals []string
		for i := 0; i < list.Len(); i++ {
			s, ok := starlark.AsString(list.Index(i))
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("additional_permissions[%q] must hold non-empty strings", key)
			}
			vals = append(vals, s)
		}
		switch key {
		case "write", "read":
			for _, p := range vals {
				if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
					return nil, fmt.Errorf("additional_permissions[%q]: %q must be an absolute path (or start with ~/)", key, p)
				}
			}
			if key == "write" {
				g.Write = vals
			} else {
				g.Read = vals
			}
		case "network":
			g.Network = vals
		default:
			return nil, fmt.Errorf("additional_permissions: unknown key %q (want write, read or network)", key)
		}
	}
	if g.IsZero() {
		return nil, errors.New("additional_permissions is empty: leave it out instead")
	}
	return &g, nil
}

// GrantRuleLine is the prefix_rule line "Always allow" writes for prefix
// With grant g (resolved).
func GrantRuleLine(prefix []string, g sandbox.Grant) string {
	line := AmendmentLine(prefix)
	if g.IsZero() {
		return line
	}
	var parts []string
	for _, kv := range []struct {
		key  string
		vals []string
	}{{"write", g.Write}, {"read", g.Read}, {"network", g.Network}} {
		if len(kv.vals) == 0 {
			continue
		}
		q := make([]string, len(kv.vals))
		for i, v := range kv.vals {
			q[i] = starlarkQuote(v)
		}
		parts = append(parts, fmt.Sprintf("%q: [%s]", kv.key, strings.Join(q, ", ")))
	}
	return strings.TrimSuffix(line, ")") + ", additional_permissions={" + strings.Join(parts, ", ") + "})"
}

// RuleGrant is what the matched allow rules grant together, or nil when
// none of them carries a grant.
func RuleGrant(matched []*Rule) *sandbox.Grant {
	var out *sandbox.Grant
	for _, r := range matched {
		if r.Decision == Allow && r.Grant != nil {
			u := r.Grant.Union(sandbox.Grant{})
			if out != nil {
				u = out.Union(*r.Grant)
			}
			out = &u
		}
	}
	return out
}
