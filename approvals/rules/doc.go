// Package rules is the rule book: Codex-compatible Starlark files of
// prefix_rule (decision for a command prefix, with an optional grant of
// extra sandbox permissions), network_rule (decision for a host) and
// host_executable (which absolute programs a bare name may stand for), read
// from the user's rules directories, trusted workspace .warden/rules and
// explicit --rules files. A RuleBook reloads them when they change and keeps
// the last good set when an edit breaks one; "Always allow" appends a rule
// (an amendment) under a file lock and reloads. Decision, the strictest
// answer wins, is what a rule and a whole evaluation say. What a rule may
// not do in a given sandbox is decided above, in approvals.
package rules
