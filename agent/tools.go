package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// The tools, exactly as DESIGN.md names them. Schemas are written out so the
// wire shape is reviewable at a glance.
var toolSchemas = []struct {
	name, description, parameters string
}{
	{"shell", "Run a command (argv, not a shell string; use [\"bash\",\"-lc\",\"...\"] for pipes) in the sandbox. " +
		"Commands that policy does not allow need the user's approval. If the sandbox blocks something you need, " +
		"ask again, preferably with sandbox_permissions \"with_additional_permissions\" and additional_permissions naming " +
		"exactly the directories to write or paths to read (it stays sandboxed), else with \"require_escalated\"; give a " +
		"justification the user will read; you may " +
		"propose a prefix_rule (an argv prefix) the user can allow for good.",
		`{"type":"object","properties":{` +
			`"command":{"type":"array","items":{"type":"string"},"description":"argv of the command"},` +
			`"workdir":{"type":"string","description":"working directory, relative to the workspace root or absolute; outside the workspace the user must approve it (or it is refused), and it never widens what the command may write"},` +
			`"timeout_ms":{"type":"integer","description":"kill the command after this many milliseconds"},` +
			`"sandbox_permissions":{"type":"string","enum":["use_default","with_additional_permissions","require_escalated"]},` +
			`"additional_permissions":{"type":"object","description":"with with_additional_permissions: what to add to the sandbox, paths absolute or relative to workdir","properties":{` +
			`"write":{"type":"array","items":{"type":"string"},"description":"directories to write"},` +
			`"read":{"type":"array","items":{"type":"string"},"description":"paths to read that the sandbox hides"},` +
			`"network":{"type":"array","items":{"type":"string"},"description":"host or host:port"}},"additionalProperties":false},` +
			`"justification":{"type":"string","description":"why the command needs more than the sandbox gives; shown to the user"},` +
			`"prefix_rule":{"type":"array","items":{"type":"string"},"description":"an argv prefix of command the user may always allow"}` +
			`},"required":["command"],"additionalProperties":false}`},
	{"apply_patch", "Edit files with a patch in the \"*** Begin Patch\" format (or a unified diff). The user reviews it; " +
		"the result says what was really applied.",
		`{"type":"object","properties":{"input":{"type":"string","description":"the whole patch"}},"required":["input"],"additionalProperties":false}`},
	{"read_file", "Read a text file as the user sees it (unsaved editor changes included). Lines come numbered.",
		`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"relative to the workspace root, or absolute"},` +
			`"offset":{"type":"integer","description":"first line to return, from 1"},` +
			`"limit":{"type":"integer","description":"how many lines to return"}` +
			`},"required":["path"],"additionalProperties":false}`},
	{"list_dir", "List a directory, recursively to depth (default 2).",
		`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"relative to the workspace root, or absolute"},` +
			`"depth":{"type":"integer","description":"levels to descend, 1 to 5"}` +
			`},"required":["path"],"additionalProperties":false}`},
	{"update_plan", "Share your plan: the steps and their status. The user sees it as progress.",
		`{"type":"object","properties":{"plan":{"type":"array","items":{"type":"object","properties":{` +
			`"step":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}` +
			`},"required":["step","status"],"additionalProperties":false}}},"required":["plan"],"additionalProperties":false}`},
}

// ToolResult is what a tool call produced, for the model and for the loop.
type ToolResult struct {
	// Content is the text returned to the model (already truncated).
	Content string
	// Verdict is Ran unless consent was refused.
	Verdict Verdict
}

// tool runs one kind of call with raw JSON arguments.
type tool func(ctx context.Context, raw json.RawMessage) (ToolResult, error)

// Registry holds the tools of one session.
type Registry struct {
	env   *ToolEnv
	tools map[string]tool
	defs  []openai.Tool
}

// NewRegistry builds the five tools over env. A nil env gives a registry
// good only for Definitions.
func NewRegistry(env *ToolEnv) *Registry {
	r := &Registry{env: env, tools: map[string]tool{}}
	for _, s := range toolSchemas {
		r.defs = append(r.defs, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.name, Description: s.description, Parameters: json.RawMessage(s.parameters),
		}})
	}
	if env != nil {
		r.tools["shell"] = env.shell
		r.tools["apply_patch"] = env.applyPatch
		r.tools["read_file"] = env.readFile
		r.tools["list_dir"] = env.listDir
		r.tools["update_plan"] = env.updatePlan
	}
	return r
}

// Definitions returns the tools as sent to the model.
func (r *Registry) Definitions() []openai.Tool { return r.defs }

// Call runs one tool call. Unknown tools, malformed JSON and wrong argument
// types come back as a clear message for the model, never as a failure of
// the session.
func (r *Registry) Call(ctx context.Context, name string, args string) ToolResult {
	t, ok := r.tools[name]
	if !ok {
		names := make([]string, 0, len(r.tools))
		for n := range r.tools {
			names = append(names, n)
		}
		sort.Strings(names)
		return ToolResult{Content: fmt.Sprintf("error: there is no tool %q; the tools are %s", name, strings.Join(names, ", "))}
	}
	raw := json.RawMessage(strings.TrimSpace(args))
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	res, err := t(ctx, raw)
	if err != nil {
		return ToolResult{Content: fmt.Sprintf("error: %s: %v", name, err)}
	}
	res.Content = Truncate(res.Content, MaxToolOutput)
	return res
}

// decodeArgs decodes strictly and explains every mistake in terms of the
// tool's schema, so the model can correct its call.
func decodeArgs(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr):
			return fmt.Errorf("argument %q must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type.String()), typeErr.Value)
		case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("the arguments are not valid JSON (%v): send one JSON object matching the tool's schema", err)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return fmt.Errorf("%s; use only the fields in the tool's schema", strings.TrimPrefix(err.Error(), "json: "))
		}
		return fmt.Errorf("arguments: %v", err)
	}
	if dec.More() {
		return errors.New("the arguments hold more than one JSON value: send exactly one object")
	}
	return nil
}

func jsonKind(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "[]string":
		return "an array of strings"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.Contains(goType, "int"):
		return "an integer"
	case goType == "bool":
		return "a boolean"
	}
	return "an object"
}
