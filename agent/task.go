package agent

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

// Task is what the user asked for, with the editor context that makes it
// precise. Prompt turns it into the user message.
type Task struct {
	Instruction string
	// File is the path of the file the request came from, if any.
	File string
	// StartLine and EndLine (from 1) locate Selection in File.
	StartLine, EndLine int
	// Selection is the selected text (or the lines around the cursor).
	Selection string
	// Diagnostics are the problems the editor shows in the selection, as
	// "line 12: message (source)".
	Diagnostics []string
	// FromFile: the instruction itself was taken from File (a `warden:`
	// comment).
	FromFile bool
}

// QuotesFile reports whether the task carries text of File (a selection, the
// editor's diagnostics of it), which the read policy must let through.
func (t Task) QuotesFile() bool {
	return t.File != "" && (strings.TrimSpace(t.Selection) != "" || len(t.Diagnostics) > 0 || t.FromFile)
}

// Prompt is the user message for the model.
func (t Task) Prompt() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(t.Instruction))
	if t.File != "" {
		b.WriteString("\n\nFile: " + t.File)
		if t.StartLine > 0 {
			if t.EndLine > t.StartLine {
				fmt.Fprintf(&b, " (lines %d-%d)", t.StartLine, t.EndLine)
			} else {
				fmt.Fprintf(&b, " (line %d)", t.StartLine)
			}
		}
	}
	if len(t.Diagnostics) > 0 {
		b.WriteString("\n\nDiagnostics:\n- " + strings.Join(t.Diagnostics, "\n- "))
	}
	if strings.TrimSpace(t.Selection) != "" {
		b.WriteString("\n\nSelected code:\n" + fence("", t.Selection))
	}
	return strings.TrimRight(b.String(), "\n")
}

// Instructions for the editor's code actions.
const (
	FixInstruction     = "Fix the problems the editor reports below. Make the smallest change that fixes them, then check it if you can."
	ExplainInstruction = "Explain what the selected code does, how it fits in the file, and anything surprising or risky in it. Do not change any files."
	TestsInstruction   = "Write tests for the selected code, in the style and framework the project already uses. Run them if you can."
)

// commentDirective finds "warden: <instruction>" inside a comment: after
// //, #, --, ;, /*, <!-- or *, so that a string literal holding "warden:"
// is not taken for one.
var commentDirective = lazyre.New(`(?://+|#+|--|;+|/\*+|<!--|^\s*\*)\s*warden:\s*(.*?)\s*(?:\*/|-->)?\s*$`)

// CommentInstruction returns the instruction of a line holding a
// `warden:` comment, such as "// warden: handle the error".
func CommentInstruction(line string) (string, bool) {
	m := commentDirective().FindStringSubmatch(line)
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return "", false
	}
	return m[1], true
}
