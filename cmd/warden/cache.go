package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

func init() {
	register(&subcommand{
		name:    "cache",
		summary: "clear the sandbox's private toolchain caches (Go, npm, pip, cargo...)",
		usage:   "cache clean [--workspace D]",
		run:     runCache,
	})
}

func runCache(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "clean" {
		if len(args) == 0 {
			return usageError(env, "cache", "no subcommand: want clean")
		}
		return usageError(env, "cache", "unknown subcommand %q: want clean", args[0])
	}
	flags := flag.NewFlagSet("warden cache clean", flag.ContinueOnError)
	workspace := flags.String("workspace", "", "clear only this workspace's caches (default: every workspace's)")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "usage: warden cache clean [--workspace D]\n\nClear the toolchain caches sandboxed commands use (under %s).\nA workspace's caches stay while a sandboxed command runs there.\n\nflags:\n", config.ToolchainCaches())
		flags.PrintDefaults()
	}
	if code, done := parseFlags(env, flags, args[1:]); done {
		return code
	}
	if flags.NArg() > 0 {
		return usageError(env, "cache", "unexpected argument %q", flags.Arg(0))
	}
	root := config.ToolchainCaches()
	if root == "" {
		fmt.Fprintln(env.stderr, "warden cache: no toolchain caches: the cache directory falls inside Warden's configuration or state")
		return 1
	}
	if *workspace != "" {
		// A workspace deleted since keeps its caches until cleaned.
		ws, err := resolveCwd(*workspace)
		if err != nil {
			if ws, err = filepath.Abs(*workspace); err != nil {
				return usageError(env, "cache", "--workspace: %v", err)
			}
		}
		return cleanSets(env.stdout, env.stderr, []string{toolcache.SetDir(root, ws)})
	}
	sets, err := toolcache.ListSets(root)
	if err != nil {
		fmt.Fprintf(env.stderr, "warden cache: %v\n", err)
		return 1
	}
	dirs := make([]string, len(sets))
	for i, s := range sets {
		dirs[i] = s.Dir
	}
	return cleanSets(env.stdout, env.stderr, dirs)
}

func cleanSets(stdout, stderr io.Writer, dirs []string) int {
	code := 0
	for _, d := range dirs {
		if err := toolcache.RemoveSet(d); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(stdout, "no caches at %s\n", d)
				continue
			}
			if errors.Is(err, toolcache.ErrInUse) {
				fmt.Fprintf(stdout, "kept %s: a running sandboxed command uses it; clean again once it ends\n", filepath.Base(d))
				continue
			}
			fmt.Fprintf(stderr, "warden cache: %s: %v\n", d, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "removed %s\n", filepath.Base(d))
	}
	if len(dirs) == 0 {
		fmt.Fprintln(stdout, "no toolchain caches")
	}
	return code
}
