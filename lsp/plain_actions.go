package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/wire"
	"go.lsp.dev/protocol"
)

// Kinds of the actions that reach Warden's own commands from the code action
// menu, for plain LSP clients (eglot) that have no command palette to run
// warden.undo or warden.status from.
const (
	kindUndo   protocol.CodeActionKind = "source.warden.undo"
	kindStatus protocol.CodeActionKind = "source.warden.status"
	kindCancel protocol.CodeActionKind = "source.warden.cancel"
)

func init() {
	RegisterCommand(Command{Name: "warden.status.show", Title: "Showing the status", Start: startStatusShow})
	RegisterCodeActions(CodeActionProvider{
		Name:    "warden.tools",
		Kinds:   []protocol.CodeActionKind{kindUndo, kindStatus, kindCancel},
		Actions: toolActions,
	})
}

// toolActions offers undo, status and the cancel of each running job to
// clients that are not Warden's own editor plugins (those announce
// experimental.wardenAskAgent and have commands of their own).
func toolActions(_ context.Context, s *Server, _ CodeActionRequest) ([]wire.CodeAction, error) {
	if s.Capabilities().AskAgent {
		return nil, nil
	}
	cmd := func(title string, kind protocol.CodeActionKind, name string, args ...any) wire.CodeAction {
		if args == nil {
			args = []any{}
		}
		return wire.CodeAction{Title: title, Kind: kind, Command: &protocol.Command{Title: title, Command: name, Arguments: args}}
	}
	actions := []wire.CodeAction{
		cmd("Warden: Undo the last change", kindUndo, "warden.undo"),
		cmd("Warden: Show status", kindStatus, "warden.status.show"),
	}
	for _, j := range s.Jobs() {
		actions = append(actions, cmd(fmt.Sprintf("Warden: Cancel job %s (%s)", j.ID, j.Title), kindCancel,
			"warden.agent.cancel", map[string]string{"jobId": j.ID}))
	}
	return actions, nil
}

// startStatusShow shows a short status with window/showMessage: what a
// client that ignores warden.status's JSON answer can read.
func startStatusShow(s *Server, args []json.RawMessage) (JobFunc, error) {
	if len(args) > 0 {
		return nil, InvalidParams("warden.status.show takes no arguments (got %d)", len(args))
	}
	return func(_ context.Context, job *jobs.Job) (string, error) {
		st := s.Status()
		var b strings.Builder
		fmt.Fprintf(&b, "Warden: %s, approval %s, sandbox %s, network %s", st.Version, st.Policy.ApprovalPolicy, st.Policy.SandboxMode, st.Policy.Network)
		if st.Model.Configured {
			fmt.Fprintf(&b, ", model %s", st.Model.Name)
		} else {
			b.WriteString(", no model configured")
		}
		var jobs []string
		for _, j := range st.Jobs {
			if j.ID != job.ID {
				jobs = append(jobs, fmt.Sprintf("%s %s", j.ID, j.Title))
			}
		}
		if len(jobs) == 0 {
			b.WriteString("; no jobs running")
		} else {
			fmt.Fprintf(&b, "; jobs (cancel with warden.agent.cancel {jobId}): %s", strings.Join(jobs, "; "))
		}
		job.Show(protocol.MessageTypeInfo, b.String())
		return "shown", nil
	}, nil
}
