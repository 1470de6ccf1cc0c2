package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// TestNewNetworkDecider: the CLI's decider takes the command's policy and
// rules and its prompter; --deny refuses, --yes allows once, never refuses
// without asking, and Always allow goes to the user's rules directory.
func TestNewNetworkDecider(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	req := netproxy.Request{Dest: netproxy.Destination{Host: "pypi.org", Port: 443, Protocol: netproxy.HTTPS},
		Origin: netproxy.Origin{Command: []string{"pip", "install", "x"}, Workdir: home}}
	for _, c := range []struct {
		approval string
		answer   approvals.ReviewDecision
		allow    bool
		reason   string
	}{
		{"on-request", approvals.Denied, false, "network to pypi.org:443 denied by the user"},
		{"on-request", approvals.Approved, true, "network to pypi.org:443 allowed once by the user"},
		{"never", approvals.Approved, false, "network to pypi.org:443 refused: approval policy is never"},
	} {
		setup, err := loadApprovalSetup(config.Config{ApprovalPolicy: "on-request"}, c.approval, nil, home)
		if err != nil {
			t.Fatal(err)
		}
		d := newNetworkDecider(context.Background(), setup, fixedPrompter{decision: c.answer, out: io.Discard}, approvals.NewSessionStore(), nil, home, nil)
		if v := d.Decide(context.Background(), req); v.Allow != c.allow || v.Reason != c.reason {
			t.Errorf("%s/%s: %+v", c.approval, c.answer, v)
		}
	}
	setup, _ := loadApprovalSetup(config.Config{ApprovalPolicy: "on-request"}, "", nil, home)
	d := newNetworkDecider(context.Background(), setup, fixedPrompter{decision: approvals.ApprovedWithAmendment, out: io.Discard}, nil, nil, home, nil)
	if v := d.Decide(context.Background(), req); !v.Allow || !strings.Contains(v.Reason, "always allowed") {
		t.Errorf("always allow: %+v", v)
	}
	fresh, _ := loadApprovalSetup(config.Config{ApprovalPolicy: "on-request"}, "never", nil, home)
	if v := newNetworkDecider(context.Background(), fresh, nil, nil, nil, home, nil).Decide(context.Background(), req); !v.Allow {
		t.Errorf("the saved rule did not load from %s: %+v", config.RulesDir(), v)
	}
}
