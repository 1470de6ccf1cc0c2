package main

import (
	"context"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// newNetworkDecider is the network decider for one CLI command (exec, run):
// the command's policy and rules, the same prompter, session store and
// audit log as its command approvals, and "Always allow `<host>`" written
// to the user's rules directory. The sandbox proxy calls its Decide and
// Record; register the run's cancel function with RegisterRun so "Deny and
// stop" ends it. ctx bounds the dialogs (the command's life).
func newNetworkDecider(ctx context.Context, setup *approvalSetup, prompter approvals.Prompter, session *approvals.SessionStore, audit *approvals.AuditLog, workspace string, notify func(string)) *approvals.NetworkDecider {
	return approvals.NewNetworkDecider(approvals.NetworkConfig{
		Policy:    setup.policy,
		Rules:     setup.rules,
		RulesDir:  config.RulesDir(),
		Prompter:  prompter,
		Session:   session,
		Audit:     audit,
		Workspace: []string{workspace},
		Context:   ctx,
		Notify:    notify,
	})
}

// networkProxy is the proxy a CLI command's sandboxed runs reach the
// network through when sb's network is ask (nil otherwise: off and on need
// none). It asks with the command's own prompter and session store.
func networkProxy(ctx context.Context, sb approvals.Sandbox, setup *approvalSetup, prompter approvals.Prompter, session *approvals.SessionStore, audit *approvals.AuditLog, workspace string, notify func(string)) *approvals.NetworkProxy {
	if sb.Policy().NetworkMode() != sandbox.NetworkAsk {
		return nil
	}
	d := newNetworkDecider(ctx, setup, prompter, session, audit, workspace, notify)
	return approvals.NewNetworkProxy(d, netproxy.Options{})
}
