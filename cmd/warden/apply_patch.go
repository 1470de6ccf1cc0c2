package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

func init() {
	var cwd string
	register(&subcommand{
		name:    "apply-patch",
		summary: "apply a Codex-format patch or a unified/git diff to disk, all or nothing",
		usage:   "apply-patch [--cwd D] [FILE|-]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cwd, "cwd", "", "workspace root the patch's paths are relative to (default: the current directory)")
		},
		run: func(ctx context.Context, env *cliEnv, args []string) int {
			if len(args) > 1 {
				return usageError(env, "apply-patch", "expected at most one patch file, got %d arguments", len(args))
			}
			src := "-"
			if len(args) == 1 {
				src = args[0]
			}
			return applyPatch(ctx, env, cwd, src)
		},
	})
}

// applyPatch exits 0 when the whole patch landed, 1 (with the reason on
// stderr and no file changed) otherwise.
func applyPatch(ctx context.Context, env *cliEnv, cwd, src string) int {
	fail := func(format string, a ...any) int {
		// Paths and hunks come from the patch's author: escaped, never rendered.
		fmt.Fprintf(env.stderr, "warden apply-patch: %s\n", command.EscapeLines(fmt.Sprintf(format, a...)))
		return 1
	}
	// A one-shot run over at most MaxPatchBytes of patch: trade some memory
	// for fewer garbage collections.
	debug.SetGCPercent(400)
	text, err := readPatch(env.stdin, src)
	if err != nil {
		return fail("%v", err)
	}
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return fail("%v", err)
		}
	}
	if info, err := os.Stat(cwd); err != nil || !info.IsDir() {
		return fail("--cwd %s is not a directory", cwd)
	}
	if !recoverInterrupted(env, "apply-patch", cwd) {
		return fail("an interrupted change in this workspace could not be settled (above); nothing was changed")
	}
	cfg, err := config.Load(config.File())
	if err != nil {
		return fail("%v", err)
	}
	changes, err := patch.Parse(text)
	if err != nil {
		return fail("%v\nNothing was changed.", err)
	}
	protected := config.ProtectedPaths(cfg, cwd)
	// What the sandbox would hold read-only there: the roots that exist
	// (a missing one holds nothing), the workspace made absolute.
	roots, _ := config.WritableRoots(cfg)
	abs, _ := filepath.Abs(cwd)
	held := sandbox.Policy{Workspace: []string{abs}, WritableRoots: roots, ProtectedPaths: protected, HomeWritable: cfg.HomeWritable}.HeldBy()
	plan, err := patch.Prepare(changes, patch.Disk{}, patch.Options{Root: cwd, WritableRoots: cfg.WritableRoots, Protected: protected, Held: held})
	if err != nil {
		return fail("%v\nNothing was changed.", err)
	}
	if len(plan.Concerns) > 0 {
		approved, asked, err := approveOnTerminal(ctx, env, src, cwd, cfg.ApprovalTimeout.D(), plan.Concerns)
		if !approved {
			msg := "refused: these changes need approval, and there is no terminal to ask on:"
			if asked {
				msg = "refused: you did not approve these changes:"
				if err != nil {
					msg = fmt.Sprintf("refused: no answer (%v) for these changes:", err)
				}
			}
			for _, c := range plan.Concerns {
				msg += "\n  " + c.String()
			}
			return fail("%s\nNothing was changed. Apply it from a terminal or from the editor (warden.patch.apply), where you can approve it, or edit those files yourself.", msg)
		}
	}
	// No checkpoint: undo (warden.undo) is for the agent's changes in the
	// editor; a patch applied by hand is undone with version control.
	res, err := patch.Apply(ctx, patch.Disk{}, plan, nil)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprint(env.stdout, command.EscapeLines(fmt.Sprint(res)))
	return 0
}

// approveOnTerminal asks the user whether to apply a patch whose changes
// need approval, with the same prompt as `warden exec`. The terminal is
// standard input when the patch comes from a file, else /dev/tty; with
// none, nothing is asked and nothing approved.
func approveOnTerminal(ctx context.Context, env *cliEnv, src, cwd string, timeout time.Duration, concerns []patch.Concern) (approved, asked bool, err error) {
	in, out := env.stdin, env.stderr
	if src == "-" || !isTerminal(in) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return false, false, nil
		}
		defer tty.Close()
		in, out = tty, tty
	}
	req := approvals.PromptRequest{Kind: approvals.PromptPatch, Cwd: cwd,
		Reason: "these changes are outside the workspace, to protected paths, or through links",
		Risk:   risk.Risk{Level: risk.Medium, Summary: fmt.Sprintf("changes that need approval: %d", len(concerns))}}
	for _, c := range concerns {
		req.Files = append(req.Files, c.Rel)
		req.Risk.Facts = append(req.Risk.Facts, c.String())
	}
	prompter := &terminalPrompter{in: bufio.NewReader(in), out: out, timeout: timeout}
	d, err := prompter.Prompt(ctx, req)
	return d.IsApproval(), true, err
}

func readPatch(stdin io.Reader, src string) (string, error) {
	r := stdin
	name := "standard input"
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return "", fmt.Errorf("read patch: %w", err)
		}
		defer f.Close()
		r, name = f, src
	}
	data, err := io.ReadAll(io.LimitReader(r, patch.MaxPatchBytes+1))
	if err != nil {
		return "", fmt.Errorf("read patch from %s: %w", name, err)
	}
	if len(data) > patch.MaxPatchBytes {
		return "", fmt.Errorf("the patch in %s is over the %d MiB limit; split it into smaller patches. Nothing was changed.", name, patch.MaxPatchBytes>>20)
	}
	return string(data), nil
}
