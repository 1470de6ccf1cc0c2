package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// approvalExecFlags are `warden exec`'s approval flags.
type approvalExecFlags struct {
	approval string
	rules    ruleFileList
	yes      bool
	deny     bool
	// grants are exec's additional permissions (run's come from the agent).
	grants grantFlags
}

func (f *approvalExecFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.approval, "approval", "", "untrusted, on-failure, on-request, never or granular (default: approval_policy from config.toml)")
	fs.Var(&f.rules, "rules", "an extra .rules file to load (repeatable)")
	fs.BoolVar(&f.yes, "yes", false, "answer every approval prompt with \"Allow once\" (no terminal needed)")
	fs.BoolVar(&f.deny, "deny", false, "answer every approval prompt with \"Deny\"")
}

// runApproved takes one command through the approvals orchestrator: policy
// and rules, a prompt on the terminal when needed, the sandbox, and the
// retry without it where the policy allows. The exit status is the
// command's, or exitRefused (77) when Warden would not run it. cwd is already
// resolved (sandboxFlags.resolve).
func runApproved(ctx context.Context, env *cliEnv, cfg config.Config, argv []string, cwd string, policy sandbox.Policy, timeout time.Duration, flags approvalExecFlags) int {
	if flags.yes && flags.deny {
		return usageError(env, "exec", "--yes and --deny contradict each other: pass one")
	}
	setup, err := loadApprovalSetup(cfg, flags.approval, flags.rules, cwd)
	if err != nil {
		return usageError(env, "exec", "%v", err)
	}
	if setup.rulesErr != nil {
		fmt.Fprintf(env.stderr, "warden exec: rules not loaded, so anything not known-safe needs approval:\n%s\n", command.EscapeLines(setup.rulesErr.Error()))
	}
	sb, err := approvals.SandboxFor(policy)
	if err != nil {
		fmt.Fprintf(env.stderr, "warden exec: %v\n", err)
		return exitRefused
	}
	audit, err := approvals.OpenAuditLog(config.StateDir())
	if err != nil {
		// The audit log is part of the contract: without it, refuse.
		fmt.Fprintf(env.stderr, "warden exec: %v\n", err)
		return exitRefused
	}
	defer audit.Close()

	var prompter approvals.Prompter
	switch {
	case flags.yes:
		prompter = fixedPrompter{approvals.Approved, env.stderr}
	case flags.deny:
		prompter = fixedPrompter{approvals.Denied, env.stderr}
	case isTerminal(env.stdin):
		prompter = &terminalPrompter{in: bufio.NewReader(env.stdin), out: env.stderr, timeout: cfg.ApprovalTimeout.D()}
	default:
		prompter = noTerminalPrompter{env.stderr}
	}
	changes := commandChanges(cfg, policy, false)
	var gapsOnce sync.Once
	notify := func(msg string) { fmt.Fprintf(env.stderr, "warden exec: %s\n", command.EscapeLines(msg)) }
	session := approvals.NewSessionStore()
	o := &approvals.Orchestrator{
		Policy: setup.policy, Rules: setup.rules, RulesDir: config.RulesDir(),
		Prompter: prompter, Audit: audit, Session: session,
		Runner: &approvals.SandboxRunner{Env: sandbox.EnvPolicy{Keep: cfg.EnvKeep}, Changes: changes, Network: networkProxy(ctx, sb, setup, prompter, session, audit, cwd, notify), OnNotEnforced: func(gaps []string) {
			gapsOnce.Do(func() {
				for _, gap := range gaps {
					fmt.Fprintf(env.stderr, "warden exec: warning: not enforced on this machine: %s\n", gap)
				}
			})
		}},
		Notify: notify,
	}
	out, err := o.Exec(ctx, approvals.ExecRequest{
		CommandRequest: approvals.CommandRequest{Argv: argv, Cwd: cwd, Sandbox: sb, Grant: flags.grants.grant()},
		Timeout:        timeout,
		Stdout:         env.stdout,
		Stderr:         env.stderr,
	})
	if err != nil {
		// The sandbox refused or the command could not start: nothing ran.
		var refused *sandbox.RefusedError
		if errors.As(err, &refused) {
			fmt.Fprintf(env.stderr, "warden exec: %s\n", command.EscapeLines(refused.Error()))
		} else {
			fmt.Fprintf(env.stderr, "warden exec: %s\n", command.EscapeLines(err.Error()))
		}
		return exitRefused
	}
	if !out.Ran {
		fmt.Fprintf(env.stderr, "warden exec: refused: %s\n", command.EscapeLines(out.Refused))
		return exitRefused
	}
	res := out.Result
	for _, n := range res.NetworkNotes {
		fmt.Fprintf(env.stderr, "warden exec: proxy: %s\n", command.EscapeLines(n))
	}
	if !out.Escalated && !out.Grant.IsZero() {
		fmt.Fprintf(env.stderr, "warden exec: ran in the sandbox with %s\n", command.EscapeText(sb.DescribeGrant(out.Grant)))
	}
	printChanges(env.stderr, "exec", res.Changes)
	switch {
	case res.TimedOut:
		fmt.Fprintf(env.stderr, "warden exec: timed out after %s; the command and everything it started were killed\n", timeout)
	case res.Canceled:
		fmt.Fprintln(env.stderr, "warden exec: interrupted; the command and everything it started were killed")
	case res.SandboxDenied && !out.Escalated:
		fmt.Fprintf(env.stderr, "warden exec: the failure looks like a sandbox denial (%s); policy: %s\n", command.EscapeText(res.Denial), policy.Summary())
		if out.Refused != "" {
			fmt.Fprintf(env.stderr, "warden exec: %s\n", command.EscapeLines(strings.TrimSpace(out.Refused)))
		}
	}
	return res.ExitCode
}
