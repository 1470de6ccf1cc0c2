package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
)

func init() {
	var cwd string
	var steps int
	var force, list, clear bool
	register(&subcommand{
		name:    "undo",
		summary: "revert Warden's last recorded change in a workspace: a patch or what a command changed",
		usage:   "undo [--cwd D] [--steps N] [--force] | undo --list [--cwd D] | undo --clear",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
			fs.IntVar(&steps, "steps", 1, "how many changes to revert, newest first")
			fs.BoolVar(&force, "force", false, "revert even files edited since Warden's change, throwing those edits away")
			fs.BoolVar(&list, "list", false, "list the workspace's recorded changes, newest first, and change nothing")
			fs.BoolVar(&clear, "clear", false, "forget every workspace's recorded changes and the file contents kept for them")
		},
		run: func(ctx context.Context, env *cliEnv, args []string) int {
			if len(args) > 0 {
				return usageError(env, "undo", "unexpected argument %q", args[0])
			}
			if steps < 1 {
				return usageError(env, "undo", "--steps must be at least 1, got %d", steps)
			}
			cps := patch.NewCheckpoints(filepath.Join(config.StateDir(), "checkpoints"))
			if clear {
				return clearUndo(env, cps)
			}
			roots, err := undoRoots(cwd)
			if err != nil {
				return usageError(env, "undo", "--cwd: %v", err)
			}
			if !recoverInterrupted(env, "undo", roots...) && !list {
				fmt.Fprintln(env.stderr, "warden undo: an interrupted change in this workspace could not be settled (above); nothing was undone")
				return 1
			}
			if list {
				return listUndo(env, cps, roots)
			}
			return runUndo(ctx, env, cps, roots, steps, force)
		},
	})
}

// undoRoots are the names a workspace's changes may be recorded under: as
// given (made absolute), and with links resolved.
func undoRoots(cwd string) ([]string, error) {
	resolved, err := resolveCwd(cwd)
	if err != nil {
		return nil, err
	}
	roots := []string{resolved}
	if abs, err := filepath.Abs(cwd); err == nil && cwd != "" && abs != resolved {
		roots = append(roots, abs)
	}
	return roots, nil
}

func runUndo(ctx context.Context, env *cliEnv, cps *patch.Checkpoints, roots []string, steps int, force bool) int {
	for step := 1; step <= steps; step++ {
		root, cp, err := cps.LastOf(roots...)
		if err == nil && cp == nil {
			err = cps.NothingToUndo(roots...)
		}
		if err != nil {
			if step > 1 && errors.Is(err, patch.ErrNothingToUndo) {
				fmt.Fprintf(env.stderr, "warden undo: only %d of %d steps: no older change is recorded\n", step-1, steps)
				return 0
			}
			fmt.Fprintf(env.stderr, "warden undo: %s\n", command.EscapeLines(err.Error()))
			return 1
		}
		res, err := cps.Undo(ctx, patch.Disk{}, root, force)
		if err != nil {
			msg := err.Error()
			if errors.Is(err, patch.ErrNeedsForce) {
				msg = strings.Replace(msg, "undo again with force", "run warden undo --force", 1)
			}
			fmt.Fprintf(env.stderr, "warden undo: %s\n", command.EscapeLines(msg))
			return 1
		}
		fmt.Fprintf(env.stdout, "undid %s%s\n", command.EscapeLines(cp.Summary), undoneCounts(res))
		if len(cp.Lost) > 0 {
			fmt.Fprintf(env.stdout, "  not recovered (their previous content was not kept): %s\n", command.EscapeLines(strings.Join(cp.Lost, ", ")))
		}
	}
	return 0
}

// undoneCounts says how many files the undo put back and removed.
func undoneCounts(res *patch.Result) string {
	var restored, removed int
	for _, f := range res.Files {
		if f.Status != patch.Landed {
			continue
		}
		if f.Kind == patch.Delete {
			removed++
		} else {
			restored++
		}
	}
	if restored+removed == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d files restored, %d removed)", restored, removed)
}

func listUndo(env *cliEnv, cps *patch.Checkpoints, roots []string) int {
	n := 0
	for _, root := range roots[:1] {
		history, err := cps.History(root, 0)
		if err != nil {
			fmt.Fprintf(env.stderr, "warden undo: %v\n", err)
			return 1
		}
		for _, cp := range history {
			state := ""
			if cp.Undone != nil {
				state = " (undone)"
			}
			kind := "patch"
			if cp.Kind == patch.KindCommand {
				kind = "command"
			}
			fmt.Fprintf(env.stdout, "%s  %-7s %s%s\n", cp.Created.Local().Format("2006-01-02 15:04:05"), kind, command.EscapeLines(cp.Summary), state)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(env.stdout, "no change recorded for this workspace")
	}
	return 0
}

func clearUndo(env *cliEnv, cps *patch.Checkpoints) int {
	size, _ := cps.Store().Usage()
	if err := cps.Clear(); err != nil {
		fmt.Fprintf(env.stderr, "warden undo --clear: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.stdout, "forgot every recorded change and freed %s of kept file contents\n", humanBytes(size))
	return 0
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
