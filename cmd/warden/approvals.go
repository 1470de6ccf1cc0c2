package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/config"
)

// ruleFileList is the repeatable --rules flag.
type ruleFileList []string

func (r *ruleFileList) String() string     { return strings.Join(*r, ",") }
func (r *ruleFileList) Set(v string) error { *r = append(*r, v); return nil }

// approvalSetup is what policy check and exec share: the approval policy and
// the rules in force for a working directory.
type approvalSetup struct {
	policy approvals.Policy
	rules  *rules.RuleBook
	// rulesErr is why the rules failed to load, if they did; evaluation
	// then asks for anything not known-safe.
	rulesErr error
}

// loadApprovalSetup reads the policy (the --approval flag over config.toml)
// and the rules: Codex's rules dir when configured, the user's rules dir,
// the .warden/rules of the workspace root and the directories above it (each
// tighten-only unless that exact directory is trusted) and any --rules
// files. root is the --cwd directory, resolved (resolveCwd): the workspace is
// what the user named, never found from markers a command could create.
func loadApprovalSetup(cfg config.Config, approvalFlag string, ruleFiles []string, root string) (*approvalSetup, error) {
	ask := cfg.ApprovalPolicy
	if approvalFlag != "" {
		ask = approvalFlag
	}
	policy, err := approvals.ParsePolicy(ask, cfg.Granular)
	if err != nil {
		return nil, err
	}
	for _, f := range ruleFiles {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("--rules %s: %w", f, err)
		}
	}
	trusted := func(dir string) bool { return rules.TrustedWorkspace(cfg.TrustedWorkspaces, dir) }
	sources := rules.UserSources(config.RulesDir(), cfg.CodexRulesDir, root, trusted)
	book, err := rules.NewRuleBook(sources, ruleFiles)
	return &approvalSetup{policy: policy, rules: book, rulesErr: err}, nil
}

// resolveCwd makes --cwd absolute with its symbolic links resolved,
// defaulting to the current directory, and checks that it is a directory.
// It is the CLI's workspace root.
func resolveCwd(cwd string) (string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}
