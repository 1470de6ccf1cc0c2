package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

type policyCheckFlags struct {
	approval      string
	sandbox       string
	network       networkFlag
	writableRoots ruleFileList
	rules         ruleFileList
	cwd           string
	json          bool
	reads         readFlags
	grants        grantFlags
}

var policyOpts policyCheckFlags

// exitRulesBroken is policy check's status when a rules file failed to
// load: the decision printed is the fallback, not what the rules say.
const exitRulesBroken = 1

func (f *policyCheckFlags) register(fs *flag.FlagSet) {
	*f = policyCheckFlags{}
	f.define(fs)
}

// define declares the flags on fs over f's current values, so flags given
// before "check" stay when more follow it.
func (f *policyCheckFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.approval, "approval", f.approval, "untrusted, on-failure, on-request, never or granular (default: approval_policy from config.toml)")
	fs.StringVar(&f.sandbox, "sandbox", f.sandbox, "read-only, workspace-write or danger-full-access (default: sandbox_mode from config.toml)")
	fs.Var(&f.network, "network", "the network to check under: --network=off, ask or on; --network alone means on (default: network_access from config.toml)")
	fs.Var(&f.writableRoots, "writable-root", "an extra directory the sandbox may write (repeatable)")
	fs.Var(&f.rules, "rules", "an extra .rules file to load (repeatable)")
	fs.StringVar(&f.cwd, "cwd", f.cwd, "the directory the command would run in (default: the current directory)")
	fs.BoolVar(&f.json, "json", f.json, "print the decision as one JSON object")
	f.reads.define(fs)
	f.grants.register(fs) // list flags: registering keeps their values
}

const policyUsage = "policy check [--approval X] [--sandbox Y] [--rules F]... [--network[=off|ask|on]] [--cwd D] [--grant-write D]... [--grant-read P]... [--grant-network HOST[:PORT]]... [--json] -- CMD ARGS..."
const policySummary = "explain what Warden's approval policy decides for a command (policy check)"

func init() {
	register(&subcommand{
		name:    "policy",
		summary: policySummary,
		usage:   policyUsage,
		flags:   policyOpts.register,
		run:     runPolicy,
	})
}

func runPolicy(_ context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "check" {
		return usageError(env, "policy", "want the subcommand check: warden policy check [flags] -- CMD ARGS...")
	}
	// Flags may also follow "check".
	fs := flag.NewFlagSet("warden policy check", flag.ContinueOnError)
	sub := policyOpts
	sub.define(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: warden %s\n\n%s\n\nflags:\n", policyUsage, policySummary)
		fs.PrintDefaults()
	}
	if code, done := parseFlags(env, fs, joinNetworkArg(args[1:])); done {
		return code
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usageError(env, "policy", "no command given: put it after --")
	}
	cfg, err := config.Load(config.File())
	if err != nil {
		fmt.Fprintf(env.stderr, "warden policy: %v\n", err)
		return exitUsage
	}
	cwd, err := resolveCwd(sub.cwd)
	if err != nil {
		return usageError(env, "policy", "--cwd: %v", err)
	}
	mode := cfg.SandboxMode
	if sub.sandbox != "" {
		mode = sub.sandbox
	}
	sbMode, err := approvals.ParseSandboxMode(mode)
	if err != nil {
		return usageError(env, "policy", "--sandbox: %v", err)
	}
	var reads sandbox.Policy
	if reads.Mode, err = sandbox.ParseMode(mode); err == nil {
		err = sub.reads.apply(&reads, cfg)
	}
	if err != nil {
		return usageError(env, "policy", "%v", err)
	}
	setup, err := loadApprovalSetup(cfg, sub.approval, sub.rules, cwd)
	if err != nil {
		return usageError(env, "policy", "%v", err)
	}
	if setup.rulesErr != nil {
		// The decision is still shown (what exec would do: ask for anything
		// not known-safe), but the check fails: it exists to test rules, and
		// a server would keep its last good rules instead.
		fmt.Fprintf(env.stderr, "warden policy: rules not loaded, so anything not known-safe needs approval:\n%s\n", command.EscapeLines(setup.rulesErr.Error()))
	}
	// status is the exit status once the decision is printed.
	status := 0
	if setup.rulesErr != nil {
		status = exitRulesBroken
	}
	// The sandbox exec would run it in: the --cwd directory is the
	// workspace, plus the configured roots, --writable-root, and (under
	// workspace-write) $TMPDIR and /tmp.
	roots, _ := config.WritableRoots(cfg)
	for _, r := range sub.writableRoots {
		if abs, err := filepath.Abs(r); err == nil {
			roots = append(roots, abs)
		}
	}
	network, err := effectiveNetwork(mode, sub.network.or(cfg.Network))
	if err != nil {
		return usageError(env, "policy", "--network: %v", err)
	}
	sb, err := approvals.SandboxFor(sandbox.Policy{Mode: reads.Mode, Network: network, Workspace: []string{cwd}, WritableRoots: roots,
		ProtectedPaths: config.ProtectedPaths(cfg, cwd), Reads: reads.Reads})
	if err != nil {
		return usageError(env, "policy", "%v", err)
	}
	o := &approvals.Orchestrator{Policy: setup.policy, Rules: setup.rules, RulesDir: config.RulesDir()}
	evaluator := o.Evaluator()
	evaluator.RecordsChanges = cfg.RecordsChanges() // as exec records them
	ev := evaluator.Evaluate(approvals.CommandRequest{Argv: argv, Cwd: cwd, Grant: sub.grants.grant(), Sandbox: sb})
	ruleSet, _ := setup.rules.Current()
	// A network allow rule the sandboxed command could have written itself
	// is not applied (approvals.EvaluateNetworkIn).
	ruleSet, _ = approvals.NetworkRulesFor(ruleSet, sb)
	dests := approvals.CheckNetwork(ruleSet, setup.policy, network, sbMode == approvals.DangerFullAccess, argv, ev.Risk, cwd)
	if ev.Decision != rules.Forbidden {
		dests = approvals.GrantedChecks(dests, ev.Grant, ev.GrantAsked)
	}
	if sub.json {
		enc := json.NewEncoder(env.stdout)
		if err := enc.Encode(policyReport{Evaluation: ev, NetworkAccess: network, Network: dests}); err != nil {
			fmt.Fprintf(env.stderr, "warden policy: %v\n", err)
			return 1
		}
		return status
	}
	fmt.Fprintf(env.stdout, "decision:  %s\nreason:    %s\n", ev.Decision, ev.Reason)
	fmt.Fprintf(env.stdout, "sandbox:   %s\n", map[bool]string{true: "none (danger-full-access)", false: "used (a rule never takes a command out of it)"}[sbMode == approvals.DangerFullAccess])
	if reads.Sandboxed() {
		fmt.Fprintf(env.stdout, "reads:     %s\n", reads.ReadSummary())
	}
	fmt.Fprintf(env.stdout, "known-safe: %v, dangerous: %v\n", ev.KnownSafe, ev.Dangerous)
	for _, m := range ev.MatchedRules {
		fmt.Fprintf(env.stdout, "rule:      %s %s (%s)%s\n", m.Decision, m.Pattern, m.Source, map[bool]string{true: ": " + m.Justification}[m.Justification != ""])
	}
	if !ev.Grant.IsZero() {
		asked := "(from the matching rules)"
		if ev.GrantAsked {
			asked = "(needs approval)"
		}
		fmt.Fprintf(env.stdout, "grant:     in the sandbox with %s %s\n", command.EscapeText(approvals.Sandbox{Reads: reads.Reads}.DescribeGrant(ev.Grant)), asked)
	}
	if len(ev.Amendment) > 0 {
		fmt.Fprintf(env.stdout, "amendment: always allow `%s`\n", strings.Join(ev.Amendment, " "))
	}
	fmt.Fprintf(env.stdout, "risk:      %s: %s\n", ev.Risk.Level, ev.Risk.Summary)
	for _, f := range ev.Risk.Facts {
		fmt.Fprintf(env.stdout, "  - %s\n", f)
	}
	fmt.Fprintf(env.stdout, "network:   %s\n", network)
	for _, n := range dests {
		fmt.Fprintf(env.stdout, "  %s %s:%d (%s): %s\n", n.Decision, command.EscapeText(n.Host), n.Port, n.Protocol, n.Reason)
	}
	return status
}
