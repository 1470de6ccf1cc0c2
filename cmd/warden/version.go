package main

import (
	"context"
	"fmt"
	"runtime"
)

func init() {
	register(&subcommand{
		name:    "version",
		summary: "print Warden's version and the Go runtime it was built with",
		usage:   "version",
		run: func(_ context.Context, env *cliEnv, args []string) int {
			if len(args) > 0 {
				return usageError(env, "version", "unexpected argument %q", args[0])
			}
			fmt.Fprintf(env.stdout, "warden %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return 0
		},
	})
}
