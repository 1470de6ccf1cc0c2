package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// ruleFileList is the repeatable --rules flag.
type ruleFileList []string

func (r *ruleFileList) String() string     { return strings.Join(*r, ",") }
func (r *ruleFileList) Set(v string) error { *r = append(*r, v); return nil }

// approvalSetup is what policy check and exec share: the approval policy and
// the rules in force for a working directory.
type approvalSetup struct {
	policy approvals.Policy
	rules  *approvals.RuleBook
	// rulesErr is why the rules failed to load, if they did; evaluation
	// then asks for anything not known-safe.
	rulesErr error
}

// loadApprovalSetup reads the policy (the --approval flag over config.toml)
// and the rules: Codex's rules dir when configured, the user's rules dir,
// the workspace's .warden/rules (tighten-only unless trusted) and any
// --rules files.
func loadApprovalSetup(cfg config.Config, approvalFlag string, ruleFiles []string, cwd string) (*approvalSetup, error) {
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
	root := workspaceRoot(cwd)
	sources := approvals.UserSources(config.RulesDir(), cfg.CodexRulesDir, root, trustedWorkspace(cfg, root))
	book, err := approvals.NewRuleBook(sources, ruleFiles)
	return &approvalSetup{policy: policy, rules: book, rulesErr: err}, nil
}

// workspaceRoot is the nearest directory at or above cwd that holds a
// .warden directory or a .git entry (the project's root, whose .warden/rules
// apply), else cwd itself. A sandbox's placeholder is no marker: while a run
// has /tmp as a writable root, /tmp/.git is one, and /tmp is no project.
func workspaceRoot(cwd string) string {
	for d := cwd; ; d = filepath.Dir(d) {
		for _, marker := range []string{".warden", ".git"} {
			p := filepath.Join(d, marker)
			if _, err := os.Lstat(p); err == nil && !sandbox.IsPlaceholder(p) {
				return d
			}
		}
		if d == filepath.Dir(d) {
			return cwd
		}
	}
}

// trustedWorkspace reports whether cwd is inside a workspace the user marked
// trusted in config.toml.
func trustedWorkspace(cfg config.Config, cwd string) bool {
	for _, t := range cfg.TrustedWorkspaces {
		abs, err := filepath.Abs(t)
		if err != nil {
			continue
		}
		if cwd == abs || strings.HasPrefix(cwd, strings.TrimSuffix(abs, "/")+"/") {
			return true
		}
	}
	return false
}

// resolveCwd makes --cwd absolute, defaulting to the current directory, and
// checks that it is a directory.
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
	info, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}
