package agent

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
)

// CommandOutcome is the one line that tells the user what became of one of
// the agent's commands: the command, its exit status, whether it ran
// sandboxed, and the connections Warden's proxy refused ("proxy: network to
// HOST:PORT denied: …"), or why it did not run. Everything the model or the
// command wrote is escaped, so a line cannot rewrite what the editor shows.
func CommandOutcome(argv []string, res CommandResult) string {
	cmd := "`" + command.EscapeText(quoteArgv(argv)) + "`"
	switch res.Verdict {
	case Denied:
		return cmd + " denied" + command.EscapeText(because(res.Reason))
	case Stopped:
		return cmd + " denied, and the task stopped"
	case Forbidden:
		return cmd + " refused by policy" + command.EscapeText(because(res.Reason))
	}
	where := "not sandboxed"
	switch {
	case res.Sandboxed && res.Granted != "":
		where = "sandboxed with " + command.EscapeText(res.Granted)
	case res.Sandboxed:
		where = "sandboxed"
	}
	line := fmt.Sprintf("%s exited %d (%s, %.1fs)", cmd, res.ExitCode, where, res.Duration.Seconds())
	if res.TimedOut {
		line = fmt.Sprintf("%s timed out and was killed (%s, %.1fs)", cmd, where, res.Duration.Seconds())
	}
	if res.Changed != "" {
		line += "; " + command.EscapeText(res.Changed)
	}
	if len(res.NetworkRefused) > 0 {
		line += "; proxy: " + command.EscapeText(strings.Join(res.NetworkRefused, "; "))
	}
	return line
}
