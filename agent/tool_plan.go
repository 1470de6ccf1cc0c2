package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

type planArgs struct {
	Plan []PlanStep `json:"plan"`
}

func (e *ToolEnv) updatePlan(_ context.Context, raw json.RawMessage) (ToolResult, error) {
	var a planArgs
	if err := decodeArgs(raw, &a); err != nil {
		return ToolResult{}, err
	}
	if len(a.Plan) == 0 {
		return ToolResult{}, errors.New(`argument "plan" must list at least one step`)
	}
	active := 0
	for i, s := range a.Plan {
		if strings.TrimSpace(s.Step) == "" {
			return ToolResult{}, fmt.Errorf("plan step %d has no text", i+1)
		}
		switch s.Status {
		case "pending", "completed":
		case "in_progress":
			active++
		default:
			return ToolResult{}, fmt.Errorf("plan step %d: status must be pending, in_progress or completed, not %q", i+1, s.Status)
		}
	}
	if active > 1 {
		return ToolResult{}, errors.New("at most one plan step may be in_progress")
	}
	e.observer().Plan(a.Plan)
	return ToolResult{Content: "Plan updated."}, nil
}

// PlanText renders a plan as lines like "[x] step", for progress and logs.
func PlanText(plan []PlanStep) string {
	var b strings.Builder
	for _, s := range plan {
		mark := "[ ]"
		switch s.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[>]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, s.Step)
	}
	return strings.TrimRight(b.String(), "\n")
}
