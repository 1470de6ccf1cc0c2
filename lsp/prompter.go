package lsp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/lsp/wire"
)

// EditorPrompter implements approvals.Prompter with window/showMessageRequest,
// following the dialog contract in DESIGN.md: the message names the command
// (or files), the working directory, the agent's justification, whether it
// runs sandboxed and the risk; the actions are, in order, Allow once, Allow
// for session, Always allow `<prefix>` (only with an amendment), Deny, Deny
// and stop; high risk: Deny, Allow once, Deny and stop, as an Error-type
// message. A network prompt (approvals.PromptNetwork) takes the same path:
// its message names the host, port, protocol and the command that asked,
// and "Always allow" names the host. A dismissed dialog, a timeout, a
// cancelled job or a lost client is a denial.
type EditorPrompter struct {
	Server *Server
	// Timeout bounds how long a dialog may stay unanswered (config
	// approval_timeout); zero means only the job's context bounds it.
	Timeout time.Duration
}

// errDismissed is why a dismissed dialog denied.
var errDismissed = errors.New("the approval dialog was dismissed")

// Prompt implements approvals.Prompter.
func (p *EditorPrompter) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	req.OpensReview = req.Kind == approvals.PromptPatch && reviewsPatches(p.Server.Capabilities())
	actions := req.Actions()
	items := make([]protocol.MessageActionItem, len(actions))
	for i, a := range actions {
		items[i] = protocol.MessageActionItem{Title: a.Title}
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	item, err := p.Server.Client().ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{
		Type:    messageTypeFor(req.Risk.Level),
		Message: req.Message(),
		Actions: items,
	})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return approvals.Denied, fmt.Errorf("the approval dialog was not answered within %s", p.Timeout)
	case err != nil:
		return approvals.Denied, fmt.Errorf("the approval dialog failed: %w", err)
	case item == nil:
		return approvals.Denied, errDismissed
	}
	if d, ok := req.Decide(item.Title); ok {
		return d, nil
	}
	return approvals.Denied, fmt.Errorf("the editor answered %q, which is not one of the offered actions", item.Title)
}

// messageTypeFor shows risk as the dialog's severity.
func messageTypeFor(l risk.Level) protocol.MessageType {
	switch l {
	case risk.High:
		return protocol.MessageTypeError
	case risk.Medium:
		return protocol.MessageTypeWarning
	}
	return protocol.MessageTypeInfo
}

// reviewsPatches reports whether the client shows a patch for review before
// it lands: Warden's own plugins do (the Neovim review tab, VS Code's Refactor
// Preview), and so does any client that confirms annotated edits.
func reviewsPatches(caps wire.ClientCapabilities) bool {
	return caps.AskAgent || caps.ChangeAnnotations
}
