package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
)

// Kinds of the agent's code actions. Fix is a quickfix so editors list it
// with the diagnostics; the others are refactor.warden.* so `only` filters
// can ask for them.
const (
	kindAgentExplain protocol.CodeActionKind = "refactor.warden.explain"
	kindAgentTests   protocol.CodeActionKind = "refactor.warden.tests"
	kindAgentComment protocol.CodeActionKind = "refactor.warden.comment"
	kindAgentAsk     protocol.CodeActionKind = "refactor.warden.ask"
)

// maxCommentScan bounds how many lines of a selection are searched for a
// `warden:` comment.
const maxCommentScan = 200

func init() {
	RegisterCodeActions(CodeActionProvider{
		Name:    "warden.agent",
		Kinds:   []protocol.CodeActionKind{protocol.QuickFix, kindAgentExplain, kindAgentTests, kindAgentComment, kindAgentAsk},
		Actions: agentActions,
	})
}

// agentActions offers the agent's entry points for a range. Each is a
// warden.agent.run command carrying the instruction and the range; the work
// happens only when the user picks one.
func agentActions(_ context.Context, s *Server, req CodeActionRequest) ([]wire.CodeAction, error) {
	doc := req.Doc
	rng := req.Range
	run := func(title string, kind protocol.CodeActionKind, args AgentRunArgs) wire.CodeAction {
		return wire.CodeAction{Title: title, Kind: kind, Command: &protocol.Command{
			Title: title, Command: "warden.agent.run", Arguments: []any{args},
		}}
	}
	var actions []wire.CodeAction
	if len(req.Diagnostics) > 0 {
		a := run("Warden: Fix with agent", protocol.QuickFix, AgentRunArgs{
			Mode: "fix", URI: doc.URI, Range: &rng, Diagnostics: req.Diagnostics,
		})
		a.Diagnostics = req.Diagnostics
		actions = append(actions, a)
	}
	if line, instruction, ok := commentIn(doc, rng); ok {
		lineRange := protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line + 1}}
		actions = append(actions, run("Warden: Do what this comment says", kindAgentComment, AgentRunArgs{
			Instruction: commentInstruction(instruction), URI: doc.URI, Range: &lineRange,
		}))
	}
	actions = append(actions,
		run("Warden: Explain", kindAgentExplain, AgentRunArgs{Mode: "explain", URI: doc.URI, Range: &rng}),
		run("Warden: Write tests", kindAgentTests, AgentRunArgs{Mode: "tests", URI: doc.URI, Range: &rng}),
	)
	if clientAsks(s) {
		// No instruction: the client asks the user for one and fills it in
		// before executing the command.
		actions = append(actions, run("Warden: Ask agent…", kindAgentAsk, AgentRunArgs{Mode: "ask", URI: doc.URI, Range: &rng}))
	}
	return actions, nil
}

// commentIn finds the first line of the range (or the cursor's line) that
// holds a `warden:` comment.
func commentIn(doc *textdoc.Document, rng protocol.Range) (line uint32, instruction string, ok bool) {
	// doc.Line, not strings.Split: this runs on every code action request,
	// and splitting a 10,000-line document each time costs milliseconds.
	last := min(int(rng.End.Line), doc.LineCount()-1, int(rng.Start.Line)+maxCommentScan)
	if rng.End.Line > rng.Start.Line && rng.End.Character == 0 {
		last = max(int(rng.Start.Line), last-1) // a selection of whole lines ends at column 0 of the next
	}
	for i := int(rng.Start.Line); i <= last && i < doc.LineCount(); i++ {
		if text, ok := agent.CommentInstruction(doc.Line(i)); ok {
			return uint32(i), text, true
		}
	}
	return 0, "", false
}

func commentInstruction(comment string) string {
	return "Do what this comment in the code says, then remove the comment: " + comment
}

// clientAsks reports whether the client said (experimental.wardenAskAgent)
// that it prompts for the instruction of an agent command sent without one.
func clientAsks(s *Server) bool { return s.Capabilities().AskAgent }
