package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/config"
)

func init() {
	var cwd string
	register(&command{
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
		fmt.Fprintf(env.stderr, "warden apply-patch: "+format+"\n", a...)
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
	cfg, err := config.Load(config.File())
	if err != nil {
		return fail("%v", err)
	}
	changes, err := patch.Parse(text)
	if err != nil {
		return fail("%v\nNothing was changed.", err)
	}
	plan, err := patch.Prepare(changes, patch.Disk{}, patch.Options{Root: cwd, WritableRoots: cfg.WritableRoots})
	if err != nil {
		return fail("%v\nNothing was changed.", err)
	}
	if len(plan.Concerns) > 0 {
		msg := "refused: these changes need approval, which the command line cannot give:"
		for _, c := range plan.Concerns {
			msg += "\n  " + c.String()
		}
		return fail("%s\nNothing was changed. Apply it from the editor (warden.patch.apply), where you can approve it, or edit those files yourself.", msg)
	}
	// No checkpoint: undo (warden.undo) is for the agent's changes in the
	// editor; a patch applied by hand is undone with version control.
	res, err := patch.Apply(ctx, patch.Disk{}, plan, nil)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprint(env.stdout, res)
	return 0
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
