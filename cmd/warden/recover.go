package main

import (
	"fmt"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals/command"
)

// recoverInterrupted finishes or rolls back, before this command touches
// the workspace, the changes a killed Warden left half done there (see
// patch.Recover), and says so on stderr. It reports false when one could not
// be settled: its files may be half changed, and a command that changes
// files there should not start.
func recoverInterrupted(env *cliEnv, name string, roots ...string) bool {
	done, err := patch.Recover(patch.JournalDir(), roots...)
	for _, r := range done {
		fmt.Fprintf(env.stderr, "warden %s: %s\n", name, command.EscapeLines(r.String()))
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "warden %s: %s\n", name, command.EscapeLines(err.Error()))
		return false
	}
	return true
}
