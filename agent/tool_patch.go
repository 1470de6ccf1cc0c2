package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

type patchArgs struct {
	Input string `json:"input"`
}

func (e *ToolEnv) applyPatch(ctx context.Context, raw json.RawMessage) (ToolResult, error) {
	var a patchArgs
	if err := decodeArgs(raw, &a); err != nil {
		return ToolResult{}, err
	}
	if strings.TrimSpace(a.Input) == "" {
		return ToolResult{}, errors.New(`argument "input" is empty: send the whole patch, from "*** Begin Patch" to "*** End Patch"`)
	}
	if e.Patcher == nil {
		return ToolResult{}, errors.New("patches cannot be applied in this session")
	}
	e.observer().Step("Proposing a patch")
	res, err := e.Patcher.ApplyPatch(ctx, a.Input, e.Dir)
	if err != nil {
		if ctx.Err() != nil {
			return ToolResult{}, ctx.Err()
		}
		return ToolResult{}, fmt.Errorf("the patch was not applied, nothing changed: %v", err)
	}
	switch res.Verdict {
	case Denied:
		return ToolResult{Verdict: Denied, Content: "The user rejected this patch" + because(res.Reason) +
			". Nothing changed. Do not propose the same change again; ask what the user wants instead."}, nil
	case Stopped:
		return ToolResult{Verdict: Stopped, Content: "The user rejected this patch and stopped the task" + because(res.Reason) + "."}, nil
	case Forbidden:
		return ToolResult{Verdict: Forbidden, Content: "Policy forbids this patch" + because(res.Reason) + ". Nothing changed; do not retry it."}, nil
	}
	summary := res.Summary
	if summary == "" {
		summary = "The patch was applied."
	}
	return ToolResult{Content: summary}, nil
}
