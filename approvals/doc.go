// Package approvals decides, for every command and patch the agent proposes,
// whether it runs, runs sandboxed, needs the user, or is refused: approval
// policies and decisions, Codex-compatible Starlark exec-policy rules, shell
// syntax analysis, static risk assessment, the session approval store, the
// orchestrator (approve → attempt → escalate) and the audit log.
//
// # Commands
//
// Evaluator.Evaluate turns a CommandRequest into an Evaluation: rules first
// (rules.go: prefix_rule files, strictest decision wins), Codex's heuristics
// for commands no rule covers (safety.go: known-safe and dangerous lists,
// applied to every command a shell script runs, found by shell.go), then
// Warden's risk rule (risk.go): a high-risk command always needs the user
// and is never offered "Allow for session" or "Always allow" (under never it
// runs sandboxed only when the sandbox stops every high-risk effect, else it
// is refused). The facts come from risk*.go: deletions and writes, git
// (risk_git.go, risk_gitconfig.go), secrets
// read from files and printed by programs (risk_secrets.go,
// risk_secretstores.go), credentials written on the command line
// (risk_credentials.go; a prefix holding one is never offered for "Always
// allow"), downloads run as code and uploads (risk_network.go), effects on
// services and other machines (risk_services.go), and where archives,
// clones and installs land (risk_destinations.go). Known-safe git is run hardened (safety_git.go: the
// Evaluation's RunArgv, which the orchestrator runs and audits); a small
// rm -rf inside the writable roots runs sandboxed except under untrusted
// (confinedDelete). testdata/corpus and corpus_test.go measure it all
// against a port of Codex's heuristic. Workspace
// rules (workspace.go) come from the root's and its ancestors'
// .warden/rules, each trusted only when its own directory is listed.
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
