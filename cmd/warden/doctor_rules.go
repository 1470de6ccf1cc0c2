package main

import (
	"fmt"
	"io"
	"os"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
)

// doctorRules says which rules are in force for a workspace at the current
// directory, and which allow rules Warden does not apply there and why:
// an allow rule runs a command in the sandbox without asking, never out of
// it, and one a sandboxed command could have written (or whose grant would
// go to a program it could have rewritten) is set aside.
type doctorRules struct {
	Workspace string `json:"workspace"`
	Loaded    int    `json:"loaded"`
	// NotApplied are the allow rules set aside, with why.
	NotApplied []approvals.RuleNote `json:"not_applied"`
	// Warnings are what the loader ignored (allow rules of an untrusted
	// workspace).
	Warnings []string `json:"warnings"`
	Error    string   `json:"error,omitempty"`
}

func rulesReport() doctorRules {
	r := doctorRules{NotApplied: []approvals.RuleNote{}, Warnings: []string{}}
	cfg, err := config.Load(config.File())
	if err != nil {
		r.Error = "the config does not load: " + err.Error()
		return r
	}
	var flags sandboxFlags
	cwd, policy, err := flags.resolve(cfg)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Workspace = cwd
	sb, err := approvals.SandboxFor(policy)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	setup, err := loadApprovalSetup(cfg, "", nil, cwd)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if setup.rulesErr != nil {
		r.Error = "the rules do not load: " + setup.rulesErr.Error()
	}
	ruleSet, _ := setup.rules.Current()
	r.Loaded = ruleSet.Len() + len(ruleSet.NetworkRules())
	if ruleSet != nil {
		r.Warnings = append(r.Warnings, ruleSet.Warnings...)
	}
	r.NotApplied = append(r.NotApplied, approvals.RulesNotApplied(ruleSet, sb, cwd, os.Environ())...)
	return r
}

func printRules(w io.Writer, r doctorRules) {
	fmt.Fprintf(w, "\nrules for a workspace at %s: %d loaded; an allow rule runs a command without asking, in the sandbox\n", command.EscapeText(r.Workspace), r.Loaded)
	if r.Error != "" {
		fmt.Fprintf(w, "  - %s\n", command.EscapeLines(r.Error))
	}
	for _, n := range r.NotApplied {
		fmt.Fprintf(w, "  - NOT applied: %s (%s): %s\n", command.EscapeText(n.Rule), command.EscapeText(n.Source), command.EscapeText(n.Why))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  - ignored: %s\n", command.EscapeText(warn))
	}
}
