// Package approvals decides, for every command and patch the agent proposes,
// whether it runs, runs sandboxed, needs the user, or is refused: approval
// policies and decisions, Codex-compatible Starlark exec-policy rules, shell
// syntax analysis, static risk assessment, the session approval store, the
// orchestrator (approve → attempt → escalate) and the audit log.
package approvals
