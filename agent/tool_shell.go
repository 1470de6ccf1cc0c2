package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/sandbox"
)

const (
	defaultCommandTimeout = 2 * time.Minute
	maxCommandTimeout     = 30 * time.Minute
)

type shellArgs struct {
	Command            []string `json:"command"`
	Workdir            string   `json:"workdir"`
	TimeoutMS          *int64   `json:"timeout_ms"`
	SandboxPermissions string   `json:"sandbox_permissions"`
	Justification      string   `json:"justification"`
	PrefixRule         []string `json:"prefix_rule"`
	// AdditionalPermissions goes with "with_additional_permissions".
	AdditionalPermissions *sandbox.Grant `json:"additional_permissions"`
}

func (e *ToolEnv) shell(ctx context.Context, raw json.RawMessage) (ToolResult, error) {
	var a shellArgs
	if err := decodeArgs(raw, &a); err != nil {
		return ToolResult{}, err
	}
	cmd, err := e.command(a)
	if err != nil {
		return ToolResult{}, err
	}
	if e.Runner == nil {
		return ToolResult{}, errors.New("commands cannot run in this session")
	}
	e.observer().Step("Running " + quoteArgv(cmd.Argv))
	res, err := e.Runner.RunCommand(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil {
			return ToolResult{}, ctx.Err()
		}
		return ToolResult{}, fmt.Errorf("the command did not run: %v", err)
	}
	switch res.Verdict {
	case Denied:
		return ToolResult{Verdict: Denied, Content: "The user denied this command" + because(res.Reason) +
			". Respect that: do not run it again and do not get the same effect another way. " +
			"Continue without it, or explain what you need and stop."}, nil
	case Stopped:
		return ToolResult{Verdict: Stopped, Content: "The user denied this command and stopped the task" + because(res.Reason) + "."}, nil
	case Forbidden:
		return ToolResult{Verdict: Forbidden, Content: "Policy forbids this command" + because(res.Reason) +
			". It will not run however it is asked; do not retry it or work around it."}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Exit code: %d\n", res.ExitCode)
	if res.TimedOut {
		fmt.Fprintf(&b, "Timed out after %s and was killed.\n", cmd.Timeout)
	}
	fmt.Fprintf(&b, "Wall time: %.1f s\n", res.Duration.Seconds())
	if res.Sandboxed && res.Granted != "" {
		fmt.Fprintf(&b, "Sandboxed: yes, with additional %s\n", res.Granted)
	} else if res.Sandboxed {
		b.WriteString("Sandboxed: yes\n")
	} else {
		b.WriteString("Sandboxed: no\n")
	}
	b.WriteString("Output:\n")
	b.WriteString(res.Output)
	return ToolResult{Content: b.String()}, nil
}

// command validates the arguments against what the tool promises.
func (e *ToolEnv) command(a shellArgs) (Command, error) {
	if len(a.Command) == 0 || a.Command[0] == "" {
		return Command{}, errors.New(`argument "command" must be a non-empty array of strings, e.g. ["ls","-la"]`)
	}
	dir, err := e.workdir(a.Workdir)
	if err != nil {
		return Command{}, err
	}
	cmd := Command{Argv: a.Command, Dir: dir, Timeout: defaultCommandTimeout, Justification: a.Justification, PrefixRule: a.PrefixRule}
	if a.TimeoutMS != nil {
		if *a.TimeoutMS <= 0 {
			return Command{}, fmt.Errorf(`argument "timeout_ms" must be positive, not %d`, *a.TimeoutMS)
		}
		cmd.Timeout = min(time.Duration(*a.TimeoutMS)*time.Millisecond, maxCommandTimeout)
	}
	switch a.SandboxPermissions {
	case "", "use_default":
	case "require_escalated":
		if strings.TrimSpace(a.Justification) == "" {
			return Command{}, errors.New(`sandbox_permissions "require_escalated" needs a "justification": one sentence the user will read before allowing it`)
		}
		cmd.Escalate = true
	case "with_additional_permissions":
		if a.AdditionalPermissions == nil || a.AdditionalPermissions.IsZero() {
			return Command{}, errors.New(`sandbox_permissions "with_additional_permissions" needs "additional_permissions": {"write": [dirs], "read": [paths], "network": [hosts]}`)
		}
		cmd.Grant = *a.AdditionalPermissions
	default:
		return Command{}, fmt.Errorf(`argument "sandbox_permissions" must be "use_default", "with_additional_permissions" or "require_escalated", not %q`, a.SandboxPermissions)
	}
	if a.AdditionalPermissions != nil && a.SandboxPermissions != "with_additional_permissions" {
		return Command{}, errors.New(`"additional_permissions" goes with sandbox_permissions "with_additional_permissions"`)
	}
	if len(a.PrefixRule) > 0 {
		if len(a.PrefixRule) > len(a.Command) {
			return Command{}, errors.New(`"prefix_rule" must be a prefix of "command"`)
		}
		for i, w := range a.PrefixRule {
			if a.Command[i] != w {
				return Command{}, fmt.Errorf(`"prefix_rule" must be a prefix of "command": element %d is %q, the command has %q`, i, w, a.Command[i])
			}
		}
	}
	return cmd, nil
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// quoteArgv renders argv for people, quoting words that need it.
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}!#~") {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}
