package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultRiskDeadline is how long a dialog may wait for the model's risk
// summary before it shows the static facts alone.
const DefaultRiskDeadline = 2 * time.Second

// RiskQuery describes a command that needs approval.
type RiskQuery struct {
	Argv          []string
	Cwd           string
	Sandbox       string // the sandbox policy, in words
	Justification string
	// StaticLevel and StaticFacts are the deterministic analyser's findings.
	StaticLevel string
	StaticFacts []string
}

// ModelRisk is the model's view of a command.
type ModelRisk struct {
	Summary string `json:"summary"`
	Level   string `json:"level"`
}

// RiskSummarizer asks the model, in a separate conversation with no tools,
// for a two-sentence summary and a risk level of a command. It is advisory:
// its answer is merged only if it arrives in time, and it never lowers the
// static level.
type RiskSummarizer struct {
	Model    Model
	Deadline time.Duration
}

var riskSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"summary":{"type":"string","description":"at most two sentences: what the command does and what could go wrong"},` +
	`"level":{"type":"string","enum":["low","medium","high"]}` +
	`},"required":["summary","level"],"additionalProperties":false}`)

const riskInstructions = `You assess shell commands for a security-conscious developer who must approve them.
Answer with JSON only: {"summary": "...", "level": "low"|"medium"|"high"}.
summary: at most two short sentences saying what the command does and what could go wrong.
level: low = reads or lists only; medium = edits project files, installs dependencies, fetches
from well-known sources; high = deletes or overwrites data, leaks secrets or code, raises
privileges, changes the system or disables security. When unsure, choose the more cautious level.`

// Summarize returns the model's assessment, or an error if it did not come
// within the deadline or was not valid.
func (r *RiskSummarizer) Summarize(ctx context.Context, q RiskQuery) (ModelRisk, error) {
	deadline := r.Deadline
	if deadline <= 0 {
		deadline = DefaultRiskDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	argv, _ := json.Marshal(q.Argv)
	var facts string
	if len(q.StaticFacts) > 0 {
		facts = "\n- " + strings.Join(q.StaticFacts, "\n- ")
	}
	user := fmt.Sprintf("OS: %s\nSandbox: %s\nWorking directory: %s\nCommand (argv): %s\nCommand line: %s\nJustification given: %s\nStatic analysis (level %s):%s",
		runtime.GOOS, q.Sandbox, q.Cwd, argv, quoteArgv(q.Argv), orNone(q.Justification), q.StaticLevel, orNone(facts))
	reply, err := r.Model.Stream(ctx, Request{
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: riskInstructions},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "risk", Schema: riskSchema, Strict: true},
		},
	}, nil)
	if err != nil {
		return ModelRisk{}, fmt.Errorf("model risk summary: %w", err)
	}
	var m ModelRisk
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(reply.Content)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return ModelRisk{}, fmt.Errorf("model risk summary is not the JSON asked for: %v", err)
	}
	m.Summary = strings.TrimSpace(m.Summary)
	if m.Summary == "" || riskRank(m.Level) < 0 {
		return ModelRisk{}, errors.New("model risk summary lacks a summary or a level low|medium|high")
	}
	if len(m.Summary) > 500 {
		m.Summary = truncateUTF8(m.Summary, 500) + "…"
	}
	return m, nil
}

// MergeLevel returns the higher of the static and the model's level: the
// model may raise the alarm, never lower it.
func MergeLevel(static, model string) string {
	if riskRank(model) > riskRank(static) {
		return model
	}
	return static
}

func riskRank(level string) int {
	switch level {
	case "low":
		return 0
	case "medium":
		return 1
	case "high":
		return 2
	}
	return -1
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}
