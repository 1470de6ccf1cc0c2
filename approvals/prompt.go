package approvals

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/sandbox"
)

// Prompter asks the user. The editor implements it with
// window/showMessageRequest (package lsp), the CLI on the terminal. Any error
// (a dismissed dialog, a timeout, a lost client, a cancelled job) is treated
// as Denied by the orchestrator: it fails closed.
type Prompter interface {
	Prompt(ctx context.Context, req PromptRequest) (ReviewDecision, error)
}

// PromptKind says what is being asked.
type PromptKind int

const (
	// PromptCommand asks whether a command may run.
	PromptCommand PromptKind = iota
	// PromptRetry asks whether a command the sandbox blocked may run again
	// without the sandbox.
	PromptRetry
	// PromptPatch asks whether a patch may be applied.
	PromptPatch
	// PromptNetwork asks whether a sandboxed command may connect to a
	// host (see network_prompt.go).
	PromptNetwork
	// PromptRead asks whether Warden may hand a secret file's text to the
	// model (ApproveRead): nothing runs, Warden reads it itself. Files
	// holds the path as shown; it is always asked as high risk.
	PromptRead
)

// PromptRequest is everything a prompt shows.
type PromptRequest struct {
	Kind          PromptKind
	Argv          []string // the command (commands and retries)
	Command       string   // Argv rendered for display
	Files         []string // the files a patch touches, for display
	Cwd           string
	Justification string // the agent's reason, if it gave one
	Reason        string // why Warden asks
	// Sandboxed reports whether the request runs inside the sandbox if
	// allowed, and Sandbox which one.
	Sandboxed bool
	Sandbox   Sandbox
	Risk      risk.Risk
	// Amendment is the prefix "Always allow" would persist, or nil.
	Amendment []string
	// AllowSession reports whether "Allow for session" is offered (never for
	// high-risk requests).
	AllowSession bool
	// Blocked is the sandbox's complaint, for a retry prompt.
	Blocked string
	// Grant is what the run may do beyond Sandbox if allowed (resolved),
	// and Added the part a retry adds to what the blocked run had.
	Grant, Added sandbox.Grant
	// OfferUnsandboxed adds "Run without sandbox", a separate action from
	// the sandboxed retry with Added.
	OfferUnsandboxed bool
	// Network is the destination a network prompt asks about.
	Network *NetworkPrompt
	// Concerns are what Warden's own checks found about a patch.
	Concerns []string
	// Additions are the lines a patch adds to files outside the workspace
	// or protected.
	Additions []FileAdditions
	// OpensReview says that approving the patch opens the editor's review
	// (Neovim's review tab, VS Code's Refactor Preview) before anything
	// lands: the approving action is then called "Review…", not "Allow
	// once", which would read as if the patch were written at once.
	OpensReview bool
}

// FileAdditions are the lines a patch adds to one file (File as shown).
type FileAdditions struct {
	File  string
	Lines []string
}

// The dialog shows at most this many added lines (per file, and in all), and
// a longer line's head and tail: the review shows the rest.
const (
	maxAddedLinesPerFile = 8
	maxAddedLines        = 16
	maxAddedLineBytes    = 160
)

// Action is one button of a prompt.
type Action struct {
	Title    string
	Decision ReviewDecision
}

// Action titles, as the dialog contract in DESIGN.md fixes them.
const (
	TitleAllowOnce    = "Allow once"
	TitleAllowSession = "Allow for session"
	TitleDeny         = "Deny"
	TitleDenyAndStop  = "Deny and stop"
	// TitleRunUnsandboxed is the retry dialog's separate choice of no
	// sandbox at all, when the dialog's question is a sandboxed grant.
	TitleRunUnsandboxed = "Run without sandbox"
	// TitleReview is "Allow once" of a patch dialog whose approval opens
	// the editor's review (PromptRequest.OpensReview). A client that
	// answers with the contract's "Allow once" still approves.
	TitleReview = "Review…"
)

// AlwaysAllowTitle is the title of the "Always allow" action for prefix.
func AlwaysAllowTitle(prefix []string) string {
	return "Always allow `" + command.EscapeText(command.Display(prefix)) + "`"
}

// Actions lists the choices in the contract's order: Allow once, Allow for
// session, Always allow `<prefix>` (only with an amendment), Deny, Deny and
// stop. High risk offers neither remembering choice and puts Deny first, so a
// client that pre-selects the first action (Emacs eglot, a stray Enter)
// denies.
func (r PromptRequest) Actions() []Action {
	once := Action{TitleAllowOnce, Approved}
	if r.OpensReview && r.Kind == PromptPatch {
		once.Title = TitleReview
	}
	if r.Risk.Level >= risk.High || r.Kind == PromptRead {
		if r.OfferUnsandboxed {
			return []Action{{TitleDeny, Denied}, once, {TitleRunUnsandboxed, ApprovedUnsandboxed}, {TitleDenyAndStop, Abort}}
		}
		return []Action{{TitleDeny, Denied}, once, {TitleDenyAndStop, Abort}}
	}
	acts := []Action{once}
	if r.AllowSession {
		acts = append(acts, Action{TitleAllowSession, ApprovedForSession})
	}
	if len(r.Amendment) > 0 {
		acts = append(acts, Action{AlwaysAllowTitle(r.Amendment), ApprovedWithAmendment})
	} else if r.Kind == PromptNetwork && r.Network != nil && r.Network.Amend {
		acts = append(acts, Action{AlwaysAllowHostTitle(r.Network.Host), ApprovedWithAmendment})
	}
	if r.OfferUnsandboxed {
		acts = append(acts, Action{TitleRunUnsandboxed, ApprovedUnsandboxed})
	}
	return append(acts, Action{TitleDeny, Denied}, Action{TitleDenyAndStop, Abort})
}

// DecisionFor maps a chosen title back to a decision; an unknown or empty
// title is a denial.
func (r PromptRequest) DecisionFor(title string) ReviewDecision {
	d, _ := r.Decide(title)
	return d
}

// Decide maps a chosen title back to a decision, and says whether the title
// was one of the actions offered. "Allow once" answers a dialog that offered
// "Review…" in its place: clients and scripts written against the contract's
// title keep working.
func (r PromptRequest) Decide(title string) (ReviewDecision, bool) {
	actions := r.Actions()
	for _, a := range actions {
		if a.Title == title {
			return a.Decision, true
		}
	}
	if title == TitleAllowOnce {
		for _, a := range actions {
			if a.Title == TitleReview {
				return a.Decision, true
			}
		}
	}
	return Denied, false
}

// Message is the prompt's text: what, where, why, how contained, how risky.
// Everything that came from the model or the command (the command, the
// justification, paths, the sandbox's complaint, the risk facts) is escaped
// with EscapeText, so control characters cannot rewrite what the user
// reads, and a long command shows its head and its tail, never only its
// start.
func (r PromptRequest) Message() string {
	if r.Kind == PromptNetwork {
		return r.networkMessage()
	}
	var b strings.Builder
	cmd := r.Command
	if len(r.Argv) > 0 {
		cmd = command.Text(r.Argv)
	}
	hidden := command.NeedsEscape(cmd) || command.NeedsEscape(r.Justification) || command.NeedsEscape(r.Cwd)
	for _, a := range r.Argv {
		hidden = hidden || command.NeedsEscape(a) // commandText spelled it $'...'
	}
	switch r.Kind {
	case PromptCommand, PromptRetry:
		r.writeCommand(&b, cmd)
	case PromptPatch:
		files := make([]string, len(r.Files))
		for i, f := range r.Files {
			files[i] = command.EscapeText(f)
			hidden = hidden || command.NeedsEscape(f)
		}
		fmt.Fprintf(&b, "Warden: apply a patch to %d %s: %s?", len(r.Files), command.PluralWord(len(r.Files), "file", "files"), strings.Join(files, ", "))
	case PromptRead:
		files := make([]string, len(r.Files))
		for i, f := range r.Files {
			files[i] = command.EscapeText(f)
			hidden = hidden || command.NeedsEscape(f)
		}
		fmt.Fprintf(&b, "Warden: let the agent read %s (a secret file)?", strings.Join(files, ", "))
	}
	if hidden {
		b.WriteString("\nNote: this request holds control or invisible characters; they are shown escaped (\\r, \\x1b, \\u202e...)")
	}
	fmt.Fprintf(&b, "\nin %s", command.EscapeText(r.Cwd))
	if r.Justification != "" {
		fmt.Fprintf(&b, "\nThe model's reason: %s", command.EscapeText(r.Justification))
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "\nWarden asks because: %s", command.EscapeText(r.Reason))
	}
	if len(r.Concerns) > 0 {
		fmt.Fprintf(&b, "\nWarden flags: %s", command.EscapeText(strings.Join(r.Concerns, "; ")))
	}
	r.writeAdditions(&b)
	if r.Blocked != "" {
		fmt.Fprintf(&b, "\nBlocked: %s", command.EscapeText(r.Blocked))
	}
	switch {
	case r.Kind == PromptPatch:
		// No process runs: Warden itself writes the files once approved.
		b.WriteString("\nSandbox: not involved: Warden writes these files itself")
	case r.Kind == PromptRead:
		b.WriteString("\nSandbox: not involved: Warden reads this file itself and hands its text to the model")
	case r.Sandboxed && !r.Grant.IsZero():
		fmt.Fprintf(&b, "\nSandbox: runs sandboxed (%s) plus %s, nothing else", command.EscapeText(r.Sandbox.Describe()), command.EscapeText(r.Sandbox.DescribeGrantHeld(r.Grant)))
		if len(r.Amendment) > 0 {
			b.WriteString("\nAlways allow saves the rule with this grant: the command stays sandboxed")
		}
		if r.OfferUnsandboxed {
			fmt.Fprintf(&b, "\n%q runs it with NO sandbox at all", TitleRunUnsandboxed)
		}
	case r.Sandboxed:
		fmt.Fprintf(&b, "\nSandbox: runs sandboxed (%s)", command.EscapeText(r.Sandbox.Describe()))
	default:
		b.WriteString("\nSandbox: NOT sandboxed")
	}
	r.writeRisk(&b)
	return b.String()
}

// writeCommand writes a command prompt's heading and, when the command is
// long or spans lines, the command itself below it: indented, escaped line
// by line, head and tail with the count of bytes between.
func (r PromptRequest) writeCommand(b *strings.Builder, cmd string) {
	oneLine := command.EscapeText(cmd)
	inHeading := len(oneLine) <= command.MaxHeadingBytes && !strings.Contains(cmd, "\n")
	quoted := "the command below"
	if inHeading {
		quoted = "`" + oneLine + "`"
	}
	switch {
	case r.Kind == PromptRetry && r.Sandboxed && !r.Added.IsZero():
		fmt.Fprintf(b, "Warden: the sandbox blocked %s. Retry it in the sandbox with %s?", quoted, command.EscapeText(r.Sandbox.DescribeGrant(r.Added)))
	case r.Kind == PromptRetry:
		fmt.Fprintf(b, "Warden: the sandbox blocked %s. Run it again WITHOUT the sandbox?", quoted)
	case r.Sandboxed && !r.Grant.IsZero():
		fmt.Fprintf(b, "Warden: run %s in the sandbox with %s?", quoted, command.EscapeText(r.Sandbox.DescribeGrant(r.Grant)))
	default:
		fmt.Fprintf(b, "Warden: run %s?", quoted)
	}
	if !inHeading {
		head, tail, n := command.HeadTail(cmd)
		fmt.Fprintf(b, "\nCommand (%d bytes):", len(cmd))
		command.IndentLines(b, command.EscapeLines(head), "    ")
		if n > 0 {
			b.WriteString("\n    " + command.NotShown(n))
			command.IndentLines(b, command.EscapeLines(tail), "    ")
		}
	}
	if len(r.Argv) > 0 {
		if count := command.Programs(r.Argv); count != "" {
			b.WriteString("\n" + count)
		}
	}
}

// writeAdditions shows what a patch adds to its sensitive files, escaped and
// indented line by line, a long line as head and tail, and says how much is
// left for the review.
func (r PromptRequest) writeAdditions(b *strings.Builder) {
	budget := maxAddedLines
	for _, fa := range r.Additions {
		fmt.Fprintf(b, "\nIt adds to %s %d %s:", command.EscapeText(fa.File), len(fa.Lines), command.PluralWord(len(fa.Lines), "line", "lines"))
		shown := min(len(fa.Lines), maxAddedLinesPerFile, budget)
		for _, l := range fa.Lines[:shown] {
			head, tail, n := command.CutMiddle(l, maxAddedLineBytes, maxAddedLineBytes-60, 40)
			line := command.EscapeText(head)
			if n > 0 {
				line += " " + command.NotShown(n) + " " + command.EscapeText(tail)
			}
			b.WriteString("\n    + " + line)
		}
		budget -= shown
		if rest := len(fa.Lines) - shown; rest > 0 {
			fmt.Fprintf(b, "\n    … %d more %s not shown here: review the patch before you allow it", rest, command.PluralWord(rest, "line", "lines"))
		}
	}
}

// writeRisk says the risk level and each fact once. The static summary only
// joins the first facts: with them listed it is left out, and a single
// fact stands on the level's line.
func (r PromptRequest) writeRisk(b *strings.Builder) {
	facts := r.Risk.Facts
	digest := len(facts) > 0 && r.Risk.Summary == risk.Summarize(&command.Analysis{}, risk.Risk{Facts: facts})
	switch {
	case digest && len(facts) == 1:
		fmt.Fprintf(b, "\nRisk: %s: %s", r.Risk.Level, command.EscapeText(facts[0]))
		return
	case digest:
		fmt.Fprintf(b, "\nRisk: %s:", r.Risk.Level)
	default:
		fmt.Fprintf(b, "\nRisk: %s: %s", r.Risk.Level, command.EscapeText(r.Risk.Summary))
	}
	for _, f := range facts {
		if strings.EqualFold(strings.TrimSpace(f), strings.TrimSpace(r.Risk.Summary)) {
			continue // the summary says it already
		}
		fmt.Fprintf(b, "\n  - %s", command.EscapeText(f))
	}
}
