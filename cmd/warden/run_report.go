package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
)

// runReport prints on the terminal what became of each command and patch of
// `warden run` (stderr, like the prompts), and remembers whether the last
// patch failed, which makes the run's exit status 1: the task ended without
// the change the agent meant to make.
type runReport struct {
	out *terminalOut
	w   io.Writer

	mu          sync.Mutex
	patchFailed string // why the last patch did not land; "" once one lands
}

func (r *runReport) line(format string, a ...any) {
	r.out.endText()
	// Every line may carry what the model or a command wrote: escaped.
	fmt.Fprintln(r.w, command.EscapeLines(fmt.Sprintf(format, a...)))
}

// lastPatchFailed is the failure of the last patch, "" when it landed or
// there was none.
func (r *runReport) lastPatchFailed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.patchFailed
}

// starting wraps the runner the orchestrator calls once a command is
// decided: "Running" is said only after any question was answered, never
// before the prompt. Embedding keeps SandboxRunner's other methods (RunEnv).
type startingRunner struct {
	*approvals.SandboxRunner
	r *runReport
}

func (s startingRunner) Run(ctx context.Context, spec approvals.RunSpec) (approvals.RunResult, error) {
	where := "sandboxed"
	if spec.Unsandboxed {
		where = "outside the sandbox"
	}
	s.r.line("› Running %s (%s)", shownArgv(spec.Argv), where)
	return s.SandboxRunner.Run(ctx, spec)
}

// reportingRunner says how each of the agent's commands ended.
type reportingRunner struct {
	agent.CommandRunner
	r *runReport
}

func (c reportingRunner) RunCommand(ctx context.Context, cmd agent.Command) (agent.CommandResult, error) {
	res, err := c.CommandRunner.RunCommand(ctx, cmd)
	shown := shownArgv(cmd.Argv)
	switch {
	case err != nil:
		c.r.line("  did not run: %s: %s", shown, command.EscapeText(err.Error()))
	case res.Verdict == agent.Denied:
		c.r.line("  denied: %s%s", shown, reason(res.Reason))
	case res.Verdict == agent.Stopped:
		c.r.line("  denied, and the task stopped: %s", shown)
	case res.Verdict == agent.Forbidden:
		c.r.line("  refused by policy: %s%s", shown, reason(res.Reason))
	default:
		note := ""
		if res.TimedOut {
			note = ", timed out and killed"
		}
		c.r.line("  exit %d (%.1fs%s)", res.ExitCode, res.Duration.Seconds(), note)
		for _, n := range res.NetworkRefused {
			c.r.line("  proxy: %s", n)
		}
		if res.Changed != "" {
			c.r.line("  %s", command.EscapeText(res.Changed))
		}
	}
	return res, err
}

// reportingPatcher says what each patch changed, or why it did not.
type reportingPatcher struct {
	agent.PatchApplier
	r *runReport
}

func (p reportingPatcher) ApplyPatch(ctx context.Context, input, dir string) (agent.PatchResult, error) {
	res, err := p.PatchApplier.ApplyPatch(ctx, input, dir)
	failed := ""
	switch {
	case err != nil:
		failed = err.Error()
		p.r.line("patch failed, nothing changed: %s", command.EscapeLines(failed))
	case res.Verdict == agent.Denied, res.Verdict == agent.Stopped:
		p.r.line("patch denied%s", reason(res.Reason))
	case res.Verdict == agent.Forbidden:
		p.r.line("patch refused by policy%s", reason(res.Reason))
	default:
		landed, then, partial := strings.Cut(res.Summary, "\nThen it failed: ")
		p.r.line("patched: %s", command.EscapeText(changedFiles(landed)))
		if partial {
			failed = then
			p.r.line("patch failed after that: %s", command.EscapeLines(then))
		}
	}
	if res.Verdict == agent.Ran {
		p.r.mu.Lock()
		p.r.patchFailed = failed
		p.r.mu.Unlock()
	}
	return res, err
}

// changedFiles picks the "M path" lines out of a patch summary ("Success.
// Updated the following files:" and then one line per file).
func changedFiles(summary string) string {
	var files []string
	for _, l := range strings.Split(summary, "\n") {
		if len(l) > 2 && l[1] == ' ' && strings.ContainsRune("ADMR", rune(l[0])) {
			files = append(files, l)
		}
	}
	if len(files) == 0 {
		return strings.TrimSpace(summary)
	}
	return strings.Join(files, ", ")
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return " (" + command.EscapeText(r) + ")"
}

// shownArgv is a command as the user reads it: words quoted where needed,
// control and invisible characters escaped (the words are the model's).
func shownArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = command.EscapeText(a)
	}
	return strings.Join(parts, " ")
}
