package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// runFlags are `warden run`'s flags: the sandbox and approval flags of
// `warden exec`, applied to every command the agent runs.
type runFlags struct {
	sandboxFlags
	approval approvalExecFlags
	maxTurns int
}

func (f *runFlags) register(fs *flag.FlagSet) {
	*f = runFlags{}
	f.sandboxFlags.register(fs,
		"the workspace the agent works in (default: the current directory)",
		"the agent's commands' network: --network=off, ask (through Warden's proxy, asked per host) or on; --network alone means on (default: network_access from config.toml)",
		"an extra directory commands and patches may write (repeatable)")
	fs.IntVar(&f.maxTurns, "max-turns", agent.DefaultMaxTurns, "stop after this many model turns")
	f.approval.register(fs)
}

func init() {
	var f runFlags
	register(&subcommand{
		name:    "run",
		summary: "run the agent on a task in a directory, asking on the terminal, patching the disk",
		usage:   `run [--cwd D] [--sandbox MODE] [--network[=off|ask|on]] [--approval X] [--rules F]... [--yes|--deny] "TASK"`,
		flags:   f.register,
		run: func(ctx context.Context, env *cliEnv, args []string) int {
			return runTask(ctx, env, args, f)
		},
	})
}

// runTask runs one agent task outside an editor. The model's text streams to
// stdout; what the agent does, the approval prompts and the transcript's
// place go to stderr, with each command's start and exit status and each
// patch's outcome. Exit 0 when the agent answered, 1 when it failed, was
// stopped or its last patch failed, 2 for a bad command line or no model.
func runTask(ctx context.Context, env *cliEnv, args []string, f runFlags) int {
	if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
		return usageError(env, "run", `no task given: warden run "fix the failing test"`)
	}
	if f.approval.yes && f.approval.deny {
		return usageError(env, "run", "--yes and --deny contradict each other: pass one")
	}
	// The agent runs command after command: keep a sandbox helper started
	// ahead of each.
	sandbox.KeepSpareHelpers(true)
	defer sandbox.KeepSpareHelpers(false)
	task := strings.Join(args, " ")
	cfg, err := config.Load(config.File())
	if err != nil {
		fmt.Fprintf(env.stderr, "warden run: %v\n", err)
		return exitUsage
	}
	model, err := agent.NewClientFor(cfg)
	if err != nil {
		var none *agent.NoModelError
		if errors.As(err, &none) {
			err = none.Terminal()
		}
		fmt.Fprintf(env.stderr, "warden run: %v\n", err)
		return exitUsage
	}
	cwd, policy, err := f.resolve(cfg)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	recoverInterrupted(env, "run", cwd)
	sb, err := approvals.SandboxFor(policy)
	if err != nil {
		fmt.Fprintf(env.stderr, "warden run: %v\n", err)
		return 1
	}
	sandbox.PrepareSpare(policy, "") // ready by the model's first command
	setup, err := loadApprovalSetup(cfg, f.approval.approval, f.approval.rules, cwd)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	if setup.rulesErr != nil {
		fmt.Fprintf(env.stderr, "warden run: rules not loaded, so anything not known-safe needs approval:\n%s\n", command.EscapeLines(setup.rulesErr.Error()))
	}
	audit, err := approvals.OpenAuditLog(config.StateDir())
	if err != nil {
		fmt.Fprintf(env.stderr, "warden run: %v\n", err)
		return 1
	}
	defer audit.Close()

	out := &terminalOut{w: env.stdout, status: env.stderr, dim: isTerminalWriter(env.stderr)}
	report := &runReport{out: out, w: env.stderr}
	var prompter approvals.Prompter
	switch {
	case f.approval.yes:
		prompter = fixedPrompter{approvals.Approved, env.stderr}
	case f.approval.deny:
		prompter = fixedPrompter{approvals.Denied, env.stderr}
	case isTerminal(env.stdin):
		prompter = &terminalPrompter{in: bufio.NewReader(env.stdin), out: env.stderr, timeout: cfg.ApprovalTimeout.D()}
	default:
		prompter = noTerminalPrompter{env.stderr}
	}
	prompter = out.before(prompter)
	if cfg.Model.RiskSummary {
		prompter = &agent.RiskPrompter{Inner: prompter, Summarizer: &agent.RiskSummarizer{Model: model, Deadline: cfg.Model.RiskDeadline.D()}}
	}
	var gapsOnce sync.Once
	notify := func(msg string) { fmt.Fprintf(env.stderr, "warden run: %s\n", command.EscapeLines(msg)) }
	session := approvals.NewSessionStore()
	orch := &approvals.Orchestrator{
		Policy: setup.policy, Rules: setup.rules, RulesDir: config.RulesDir(),
		Prompter: prompter, Audit: audit, Session: session,
		Runner: startingRunner{&approvals.SandboxRunner{Env: sandbox.EnvPolicy{Keep: cfg.EnvKeep}, Changes: commandChanges(cfg, policy, true), Network: networkProxy(ctx, sb, setup, prompter, session, audit, cwd, notify), OnNotEnforced: func(gaps []string) {
			gapsOnce.Do(func() {
				for _, gap := range gaps {
					fmt.Fprintf(env.stderr, "warden run: warning: not enforced on this machine: %s\n", gap)
				}
			})
		}}, report},
		Notify: notify,
	}
	orchestrated := &agent.Orchestrated{Orchestrator: orch, Sandbox: sb}
	sess, err := agent.NewSession(agent.SessionConfig{
		Model: model,
		Env: agent.ToolEnv{
			Dir:    cwd,
			Runner: reportingRunner{orchestrated, report},
			Reads:  orchestrated,
			Patcher: reportingPatcher{&agent.PatchPath{Workspace: patch.Disk{}, Orchestrator: orch, Sandbox: sb,
				Checkpoints: patch.NewCheckpoints(filepath.Join(config.StateDir(), "checkpoints"))}, report},
			Files:    agent.DiskFiles{},
			Observer: &terminalObserver{out: out, err: env.stderr},
		},
		Facts:         []string{"Sandbox: " + sb.String(), "Approval policy: " + setup.policy.Ask.String(), "Interface: a terminal; the user sees your text as it streams"},
		TranscriptDir: filepath.Join(config.StateDir(), "sessions"),
		MaxTurns:      f.maxTurns,
		OnText:        out.text,
		OnReasoning:   out.reasoning,
	})
	if err != nil {
		fmt.Fprintf(env.stderr, "warden run: %v\n", err)
		return 1
	}
	defer sess.Close()
	res, err := sess.Run(ctx, task)
	out.endText()
	fmt.Fprintf(env.stderr, "warden run: transcript %s\n", sess.Transcript.MarkdownPath)
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(env.stderr, "warden run: interrupted")
		return 1
	case err != nil:
		// The model server's own words: shown, escaped.
		fmt.Fprintf(env.stderr, "warden run: %s\n", command.EscapeLines(err.Error()))
		return 1
	case res.Stopped:
		fmt.Fprintf(env.stderr, "warden run: stopped: %s\n", res.Reason)
		return 1
	case report.lastPatchFailed() != "":
		fmt.Fprintln(env.stderr, "warden run: the agent's last patch failed, so its change is not on disk")
		return 1
	}
	return 0
}

// terminalOut streams the model's text to stdout and keeps lines tidy when
// status lines and prompts (on stderr) interleave with it. The model's
// reasoning, for servers that send it, streams to stderr under a label
// (dimmed on a terminal): never part of the answer on stdout.
type terminalOut struct {
	mu          sync.Mutex
	w           io.Writer
	midLine     bool
	status      io.Writer
	dim         bool
	inReasoning bool
}

func (t *terminalOut) text(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endReasoning()
	io.WriteString(t.w, s)
	t.midLine = !strings.HasSuffix(s, "\n")
}

func (t *terminalOut) reasoning(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == nil {
		return
	}
	if !t.inReasoning {
		t.endLine()
		label := "› thinking: "
		if t.dim {
			label += "\x1b[2m"
		}
		io.WriteString(t.status, label)
		t.inReasoning = true
	}
	io.WriteString(t.status, command.EscapeLines(s)) // the model's words: shown, never obeyed
}

func (t *terminalOut) endReasoning() {
	if !t.inReasoning {
		return
	}
	end := "\n"
	if t.dim {
		end = "\x1b[0m\n"
	}
	io.WriteString(t.status, end)
	t.inReasoning = false
}

// endText ends a streamed line before something else is printed.
func (t *terminalOut) endText() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endReasoning()
	t.endLine()
}

func (t *terminalOut) endLine() {
	if t.midLine {
		io.WriteString(t.w, "\n")
		t.midLine = false
	}
}

// before returns a prompter that ends the model's current line first.
func (t *terminalOut) before(p approvals.Prompter) approvals.Prompter {
	return prompterFunc(func(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
		t.endText()
		return p.Prompt(ctx, req)
	})
}

type prompterFunc func(context.Context, approvals.PromptRequest) (approvals.ReviewDecision, error)

func (f prompterFunc) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	return f(ctx, req)
}

// terminalObserver prints what the agent does as status lines on stderr.
type terminalObserver struct {
	out  *terminalOut
	err  io.Writer
	last string
}

func (o *terminalObserver) Step(text string) {
	if text == o.last || text == "Waiting for the model" {
		return // the streamed text shows the model working
	}
	if strings.HasPrefix(text, "Running ") {
		return // said once the command is decided (startingRunner), after any prompt
	}
	o.last = text
	o.out.endText()
	fmt.Fprintf(o.err, "› %s\n", command.EscapeText(text)) // the model's words: shown, never obeyed
}

func (o *terminalObserver) Plan(plan []agent.PlanStep) {
	o.out.endText()
	fmt.Fprintf(o.err, "Plan:\n%s\n", indent(command.EscapeLines(agent.PlanText(plan)), "  "))
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
