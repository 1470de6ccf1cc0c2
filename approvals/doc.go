// Package approvals decides, for every command, patch and read the agent
// proposes, whether it runs, runs sandboxed, needs the user, or is refused:
// approval policies, the evaluation of a request, the orchestrator (approve
// → attempt → escalate), the session store, grants, prompts and the audit
// log. Below it, by role, with nothing pointing back up:
//
//   - approvals/command: what a command line is (shell syntax tree, wrappers
//     unwrapped, words, the plain-words check, escaping for display);
//   - approvals/safe: Codex's known-safe and dangerous lists;
//   - approvals/risk: static risk facts, one file per concern;
//   - approvals/rules: the rule book (prefix_rule, network_rule,
//     host_executable, Codex import, amendments) and Decision.
//
// # Commands
//
// Evaluator.Evaluate (evaluate.go) turns a CommandRequest into an
// Evaluation: rules first (the strictest matching decision wins; what a rule
// may not do in this sandbox is set aside, rule_apply.go), Codex's
// heuristics for commands no rule covers (safe.KnownSafe and the dangerous
// list, applied to every command a shell script runs), then Warden's risk
// rule: a high-risk command (risk.Assess) always needs the user and is never
// offered "Allow for session" or "Always allow" (under never it runs
// sandboxed only when the sandbox stops every high-risk effect, else it is
// refused). Known-safe git is run hardened (safe.HardenGit: the
// Evaluation's RunArgv, which the orchestrator runs and audits); a small rm
// -rf inside the writable roots runs sandboxed except under untrusted
// (confinedDelete). testdata/corpus and corpus_test.go measure it all
// against a port of Codex's heuristic.
//
// Orchestrator.Exec is the one flow: the working directory resolved (links
// included; session keys, prompts and the run use it) and judged against
// the session's Sandbox.Workspace and writable roots (workdir.go: outside
// is high risk, asked, or refused under never; it never widens the sandbox)
// → requirement → forbidden stops →
// prompt (through Prompter, with the SessionStore) → first attempt in the
// sandbox (through Runner) → on a sandbox denial, where the policy allows, a
// "retry without the sandbox?" prompt and an escalated run → result. Time
// spent waiting for the user is not charged to the command's timeout. Every
// step is appended to the AuditLog.
//
// # Patches (the entry point for apply_patch)
//
// A patch asks Orchestrator.ApprovePatch with a PatchRequest: the absolute
// paths it touches (PatchFile: add, update, delete, or move with MoveTo),
// the cwd, the sandbox (its writable roots) and the agent's justification.
// EvaluatePatch applies without asking when every path is inside the
// writable roots and none is protected (sandbox.ProtectedNames anywhere below
// a root: .git, .warden, .codex..., plus Sandbox.ProtectedPaths and
// Orchestrator.ProtectedPaths), except under the untrusted policy. It
// reports each file that needs the user with a PatchReason:
// outside-writable-roots, protected-path, or policy. Approval for the
// session is remembered per file (PatchFileKey): a later patch skips the
// prompt only when every file it touches was approved. Under never, or
// granular with patches rejected, a patch that would need the user is
// refused. The caller applies the patch only when PatchApproval.Approved;
// PatchApproval.Abort means the user chose "Deny and stop".
//
// # Prompts
//
// PromptRequest.Actions lists the dialog's choices in the order DESIGN.md
// fixes (Allow once, Allow for session, Always allow `<prefix>`, Deny, Deny
// and stop) and Message renders command, cwd, justification, sandbox and
// risk. Any Prompter error — a dismissed dialog, a timeout, a lost client —
// is a denial.
package approvals
