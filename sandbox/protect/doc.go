// Package protect says what stays read-only inside a writable root. It
// names the entries that configure tools which run code without the user
// running the project's own tooling: every version control system (VCSes:
// what each executes or obeys, apart from its data), the shell on entering
// the directory (direnv, mise, and the files their configuration sources or
// loads: ShellEnvTargets), editors opening the folder, MCP servers, Warden
// and other agents. The sandbox keeps them read-only at any depth (its scan
// asks Matcher) and moves away the ones a command creates; a patch to one
// needs the user's approval (Rel asks the same Matcher). One answer, so
// the two never disagree.
package protect
