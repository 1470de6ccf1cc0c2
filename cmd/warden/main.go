// Command warden is a language server that lets a coding agent work inside an
// editor while a human approves everything risky it does.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/internal/lazyre"
	"github.com/wardenhq/warden/sandbox/linux"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitUsage is the exit status for a command line Warden does not understand.
const exitUsage = 2

// subcommand is one subcommand. Each lives in its own file and registers itself
// from init, so adding a subcommand never touches this file.
type subcommand struct {
	name    string
	summary string // one line for the command list
	usage   string // the synopsis after "warden "
	hidden  bool   // internal entry points (the sandbox helper) stay out of help
	// flags declares the subcommand's flags on fs; nil means it takes none.
	flags func(fs *flag.FlagSet)
	// run does the work with the arguments left after the flags and returns
	// the process exit status.
	run func(ctx context.Context, env *cliEnv, args []string) int
}

// cliEnv carries the process's standard streams so commands stay testable.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

var commands = map[string]*subcommand{}

func register(c *subcommand) {
	if _, dup := commands[c.name]; dup {
		panic("warden: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == linux.HelperArg {
		linux.HelperMain(os.Args[2:]) // the sandbox helper never returns
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// runCLI dispatches to a subcommand and returns the exit status.
func runCLI(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		printUsage(env.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok && !c.hidden {
				return runCommand(ctx, env, c, []string{"--help"})
			}
		}
		printUsage(env.stdout)
		return 0
	case "--version", "-version":
		return runCommand(ctx, env, commands["version"], args[1:])
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "warden: unknown command %q\n\n", args[0])
		printUsage(env.stderr)
		return exitUsage
	}
	if c.name != "version" && c.name != "doctor" {
		// No safe place for the rules and the audit log: say so rather
		// than keep them where a sandboxed command could rewrite them.
		if err := config.CheckDirs(); err != nil {
			fmt.Fprintf(env.stderr, "warden %s: %v\n", c.name, err)
			return exitUsage
		}
	}
	return runCommand(ctx, env, c, args[1:])
}

func runCommand(ctx context.Context, env *cliEnv, c *subcommand, args []string) int {
	fs := flag.NewFlagSet("warden "+c.name, flag.ContinueOnError)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: warden %s\n\n%s\n", c.usage, c.summary)
		var n int
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(out, "\nflags:")
			fs.PrintDefaults()
		}
	}
	if c.flags != nil {
		c.flags(fs)
	}
	if code, done := parseFlags(env, fs, args); done {
		return code
	}
	return c.run(ctx, env, fs.Args())
}

// parseFlags parses args into fs, whose Usage is set. --help prints the
// usage on stdout (done, status 0); a bad flag prints Parse's complaint on
// stderr (done, exitUsage). Otherwise fs writes to stderr from then on.
// networkFlagMessage is the flag package's complaint about --network, which
// takes a bare form (on) and so is parsed as a boolean: its value is a mode,
// and "invalid boolean value" would mislead.
var networkFlagMessage = lazyre.New(`invalid boolean value ("[^"\n]*") for -network: `)

func parseFlags(env *cliEnv, fs *flag.FlagSet, args []string) (code int, done bool) {
	// Parse prints its own complaint (and, for --help, the usage) to the
	// flag set's output; hold it so help goes to stdout and errors to stderr.
	var parseOut bytes.Buffer
	fs.SetOutput(&parseOut)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(env.stdout)
			fs.Usage()
			return 0, true
		}
		env.stderr.Write(networkFlagMessage().ReplaceAll(parseOut.Bytes(), []byte("invalid value $1 for flag -network: ")))
		return exitUsage, true
	}
	fs.SetOutput(env.stderr)
	return 0, false
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: warden <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for name, c := range commands {
		if !c.hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-12s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'warden <command> --help' for a command's flags.")
}

// usageError reports a bad command line and returns the usage exit status.
func usageError(env *cliEnv, c string, format string, a ...any) int {
	fmt.Fprintf(env.stderr, "warden %s: %s\nRun 'warden %s --help' for usage.\n", c, fmt.Sprintf(format, a...), c)
	return exitUsage
}
