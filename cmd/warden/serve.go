package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/protect"
)

func init() {
	var logFile, logLevel string
	register(&subcommand{
		name:    "serve",
		summary: "run the language server on stdin/stdout (start it from your editor)",
		usage:   "serve [--log-file F] [--log-level debug|info|warn|error]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&logFile, "log-file", "", "append logs to `file` instead of stderr (stdout carries the protocol)")
			fs.StringVar(&logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
		},
		run: func(ctx context.Context, env *cliEnv, args []string) int {
			if len(args) > 0 {
				return usageError(env, "serve", "unexpected argument %q", args[0])
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError(env, "serve", "--log-level %q: want debug, info, warn or error", logLevel)
			}
			logOut := env.stderr
			if logFile != "" {
				f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					fmt.Fprintf(env.stderr, "warden serve: cannot open the log file: %v\n", err)
					return 1
				}
				defer f.Close()
				logOut = f
			}
			log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
			// When the editor dies, writing to stdout raises SIGPIPE, which
			// would kill warden mid-job (a sandboxed command, an audit
			// entry). Catching it turns the write into an EPIPE error; the
			// server then sees its input end and stops in order. Notify, not
			// Ignore: an ignored signal stays ignored in child processes.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			// The agent runs command after command: keep a sandbox helper
			// started ahead of each.
			sandbox.KeepSpareHelpers(true)
			protect.ScanNotice = func(msg string) { log.Warn(msg) }
			defer sandbox.KeepSpareHelpers(false)

			cfg, cfgErr := config.Load(config.File())
			if cfgErr != nil {
				// Keep serving, but fail closed: ask before everything until
				// the file is fixed. None of the file applies; the
				// environment's settings (Load kept them) and the editor's
				// still do. The editor is told after initialize.
				log.Error("config not loaded", "err", cfgErr)
				cfg.ApprovalPolicy = "untrusted"
			}
			srv := lsp.New(lsp.Options{
				Version:   version,
				Logger:    log,
				Config:    cfg,
				ConfigErr: cfgErr,
			})
			log.Info("warden serve starting", "version", version, "pid", os.Getpid())
			return srv.Serve(ctx, stdio{env.stdin, env.stdout})
		},
	})
}

// stdio joins the process's standard input and output into one connection.
type stdio struct {
	in  io.Reader
	out io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

// Close closes stdin so a pending read ends; stdout stays open for the exit.
func (s stdio) Close() error {
	if c, ok := s.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
