package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/wire"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Client makes server→client calls. Every call is bounded by both the
// caller's ctx and the connection: when the editor goes away, pending calls
// return an error (callers asking for approval must treat that as a denial).
// A call whose ctx ends is cancelled at the client with $/cancelRequest.
//
// Never call the client from a request handler, a code action provider or a
// document observer: those run on the goroutine that reads the client's
// messages, so the answer could never be read. Call it from jobs.
type Client struct {
	conn    jsonrpc2.Conn
	connCtx context.Context // ends with the connection
	log     *slog.Logger
	caps    func() wire.ClientCapabilities
}

// Capabilities returns what the client said it supports at initialize.
func (c *Client) Capabilities() wire.ClientCapabilities { return c.caps() }

// call sends a request and decodes the result into result (which may be nil).
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	if ctx.Value(readLoopKey{}) != nil {
		err := fmt.Errorf("%s called from a request handler, which would deadlock: call the client from a job (Command.Start)", method)
		c.log.Error("client call refused", "err", err)
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.connCtx, cancel)
	defer stop()
	if nudged[method] {
		jobs.AwaitProgress(ctx) // the job shows in the editor before it asks
		t := time.AfterFunc(nudgeAfter, func() {
			c.LogMessage(protocol.MessageTypeLog, "Warden: waiting for your answer to "+method)
		})
		defer t.Stop()
	}
	id, err := c.conn.Call(ctx, method, params, result)
	if err != nil {
		if ctx.Err() != nil {
			// Tell the client we no longer wait (best effort; the connection
			// may be gone).
			if c.connCtx.Err() == nil {
				_ = c.conn.Notify(context.WithoutCancel(ctx), "$/cancelRequest", map[string]any{"id": &id})
			}
			if c.connCtx.Err() != nil {
				return fmt.Errorf("%s: the editor disconnected", method)
			}
			return fmt.Errorf("%s: %w", method, ctx.Err())
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// nudged are the requests that wait for the user. eglot leaves a message
// unread when it arrives in the same read as another (its reply to
// executeCommand, say) and only handles it when more bytes come: a request
// still unanswered after nudgeAfter is followed by a harmless logMessage, so
// no dialog or edit sits unseen.
var nudged = map[string]bool{"window/showMessageRequest": true, "workspace/applyEdit": true}

const nudgeAfter = 300 * time.Millisecond

func (c *Client) notify(method string, params any) error {
	if err := c.connCtx.Err(); err != nil {
		return fmt.Errorf("%s: the editor disconnected", method)
	}
	if err := c.conn.Notify(context.WithoutCancel(c.connCtx), method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// ShowMessageRequest shows a message with action buttons and waits for the
// user's choice, its message starting "Warden: ". A dismissed dialog returns (nil, nil). Always pass at least
// one action: Neovim 0.7 raises a Lua error without them.
func (c *Client) ShowMessageRequest(ctx context.Context, params *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	if len(params.Actions) == 0 {
		return nil, fmt.Errorf("window/showMessageRequest: give at least one action")
	}
	prefixed := *params
	prefixed.Message = withPrefix(params.Message)
	var raw json.RawMessage
	if err := c.call(ctx, "window/showMessageRequest", &prefixed, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var item protocol.MessageActionItem
	if err := json.Unmarshal(raw, &item); err != nil {
		return nil, fmt.Errorf("window/showMessageRequest: the editor answered %s: %w", excerpt(raw), err)
	}
	return &item, nil
}

// ApplyEdit asks the client to apply a workspace edit.
func (c *Client) ApplyEdit(ctx context.Context, params *wire.ApplyWorkspaceEditParams) (wire.ApplyWorkspaceEditResult, error) {
	var res wire.ApplyWorkspaceEditResult
	var raw json.RawMessage
	if err := c.call(ctx, "workspace/applyEdit", params, &raw); err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("workspace/applyEdit: the editor answered %s: %w", excerpt(raw), err)
	}
	return res, nil
}

// ShowDocument asks the client to show a document or URL (LSP 3.16; only
// when Capabilities().ShowDocument).
func (c *Client) ShowDocument(ctx context.Context, params *wire.ShowDocumentParams) (wire.ShowDocumentResult, error) {
	var res wire.ShowDocumentResult
	var raw json.RawMessage
	if err := c.call(ctx, "window/showDocument", params, &raw); err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("window/showDocument: the editor answered %s: %w", excerpt(raw), err)
	}
	return res, nil
}

// WorkDoneProgressCreate asks the client to create a progress token (only
// when Capabilities().WorkDoneProgress).
func (c *Client) WorkDoneProgressCreate(ctx context.Context, token *protocol.ProgressToken) error {
	return c.call(ctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: *token}, nil)
}

// Progress sends $/progress. params must be a pointer: ProgressToken only
// marshals correctly through one.
func (c *Client) Progress(params *protocol.ProgressParams) error {
	return c.notify("$/progress", params)
}

// ShowMessage shows a notification, starting "Warden: " whoever composed it.
func (c *Client) ShowMessage(typ protocol.MessageType, message string) error {
	return c.notify("window/showMessage", &protocol.ShowMessageParams{Type: typ, Message: withPrefix(message)})
}

// LogMessage writes to the client's log for this server.
func (c *Client) LogMessage(typ protocol.MessageType, message string) error {
	return c.notify("window/logMessage", &protocol.LogMessageParams{Type: typ, Message: message})
}

// progress sends a $/progress with a raw token.
func (c *Client) progress(token json.RawMessage, v wire.ProgressValue) error {
	return c.notify("$/progress", &wire.ProgressParams{Token: token, Value: v})
}

// createProgress sends window/workDoneProgress/create with a raw token.
func (c *Client) createProgress(ctx context.Context, token json.RawMessage) error {
	return c.call(ctx, "window/workDoneProgress/create", map[string]json.RawMessage{"token": token}, nil)
}

// excerpt is the start of an answer the client could not decode, for the
// error that says so.
func excerpt(raw json.RawMessage) string {
	if len(raw) <= 80 {
		return string(raw)
	}
	return string(raw[:80]) + "…"
}
