package agent

import (
	"context"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/risk"
)

// RiskPrompter adds the model's risk summary to command prompts before the
// inner prompter shows them. The summary is merged only if it arrives within
// the summarizer's deadline, and it can raise the level (which takes "Allow
// for session" and "Always allow" off a high-risk dialog) but never lower it.
type RiskPrompter struct {
	Inner      approvals.Prompter
	Summarizer *RiskSummarizer
	// OnError, if set, is told why a summary was left out (for the log).
	OnError func(error)
}

// Prompt implements approvals.Prompter.
func (p *RiskPrompter) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	if p.Summarizer != nil && (req.Kind == approvals.PromptCommand || req.Kind == approvals.PromptRetry) {
		sandbox := "none (runs unsandboxed)"
		if req.Sandboxed {
			sandbox = req.Sandbox.String()
		}
		m, err := p.Summarizer.Summarize(ctx, RiskQuery{
			Argv: req.Argv, Cwd: req.Cwd, Sandbox: sandbox, Justification: req.Justification,
			StaticLevel: req.Risk.Level.String(), StaticFacts: req.Risk.Facts,
		})
		if err == nil {
			req.Risk = mergeModelRisk(req.Risk, m)
		} else if p.OnError != nil && ctx.Err() == nil {
			p.OnError(err)
		}
	}
	return p.Inner.Prompt(ctx, req)
}

// mergeModelRisk adds the model's summary as a fact and raises the level if
// the model thinks it higher.
func mergeModelRisk(r risk.Risk, m ModelRisk) risk.Risk {
	merged := r
	merged.Facts = append(append([]string(nil), r.Facts...), "model ("+m.Level+"): "+m.Summary)
	if level := riskLevelOf(m.Level); level > r.Level {
		merged.Level = level
		merged.Summary = r.Summary + " (raised to " + m.Level + " by the model's assessment)"
	}
	return merged
}

func riskLevelOf(s string) risk.Level {
	switch s {
	case "high":
		return risk.High
	case "medium":
		return risk.Medium
	}
	return risk.Low
}
