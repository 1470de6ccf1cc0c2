package approvals

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
)

// NetworkPrompt is what a network prompt asks about and the facts shown
// with it. Host comes from the sandboxed command: it is shown escaped.
type NetworkPrompt struct {
	Host     string
	Port     int
	Protocol string
	// FirstContact: no connection to Host was allowed before this session.
	FirstContact bool
	// BytesUp is how much the command has sent through the proxy so far.
	BytesUp int64
	// Facts are the host facts (known registry, the repository's remote,
	// this machine or the local network, or unknown).
	Facts []string
	// Amend offers "Always allow `<host>`".
	Amend bool
}

// AlwaysAllowHostTitle is the title of the "Always allow" action for a host.
func AlwaysAllowHostTitle(host string) string {
	return "Always allow `" + command.EscapeText(host) + "`"
}

// networkMessage is a network prompt's text: which command wants which
// host, where it runs, why Warden asks, and the facts. The command, its
// directory and the host came from the sandboxed side: all escaped, a long
// command shown as head and tail.
func (r PromptRequest) networkMessage() string {
	n := r.Network
	if n == nil {
		n = &NetworkPrompt{}
	}
	var b strings.Builder
	dest := fmt.Sprintf("%s port %d (%s)", command.EscapeText(n.Host), n.Port, command.EscapeText(n.Protocol))
	cmd := command.Text(r.Argv)
	oneLine := command.EscapeText(cmd)
	hidden := command.NeedsEscape(cmd) || command.NeedsEscape(r.Cwd) || command.NeedsEscape(n.Host)
	for _, a := range r.Argv {
		hidden = hidden || command.NeedsEscape(a)
	}
	switch {
	case len(r.Argv) == 0:
		fmt.Fprintf(&b, "Warden: a sandboxed command wants to connect to %s. Allow?", dest)
	case len(oneLine) <= command.MaxHeadingBytes && !strings.Contains(cmd, "\n"):
		fmt.Fprintf(&b, "Warden: `%s` wants to connect to %s. Allow?", oneLine, dest)
	default:
		fmt.Fprintf(&b, "Warden: the command below wants to connect to %s. Allow?", dest)
		head, tail, cut := command.HeadTail(cmd)
		fmt.Fprintf(&b, "\nCommand (%d bytes):", len(cmd))
		command.IndentLines(&b, command.EscapeLines(head), "    ")
		if cut > 0 {
			b.WriteString("\n    " + command.NotShown(cut))
			command.IndentLines(&b, command.EscapeLines(tail), "    ")
		}
	}
	if hidden {
		b.WriteString("\nNote: this request holds control or invisible characters; they are shown escaped (\\r, \\x1b, \\u202e...)")
	}
	if r.Cwd != "" {
		fmt.Fprintf(&b, "\nin %s", command.EscapeText(r.Cwd))
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "\nWarden asks because: %s", command.EscapeText(r.Reason))
	}
	if n.FirstContact {
		b.WriteString("\nFirst contact with this host this session")
	} else {
		b.WriteString("\nThis host was reached before this session")
	}
	fmt.Fprintf(&b, "\nUploaded so far by this command: %s", risk.ByteCount(n.BytesUp))
	fmt.Fprintf(&b, "\nRisk: %s: %s", r.Risk.Level, command.EscapeText(r.Risk.Summary))
	for _, f := range r.Risk.Facts {
		if strings.EqualFold(strings.TrimSpace(f), strings.TrimSpace(r.Risk.Summary)) {
			continue // the summary says it already
		}
		fmt.Fprintf(&b, "\n  - %s", command.EscapeText(f))
	}
	return b.String()
}
