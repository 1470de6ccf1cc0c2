package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

var doctorJSON bool

func init() {
	register(&subcommand{
		name:    "doctor",
		summary: "show what this machine's sandbox enforces, layer by layer, and what it cannot; check config.toml and the model",
		usage:   "doctor [--json]",
		flags: func(fs *flag.FlagSet) {
			doctorJSON = false
			fs.BoolVar(&doctorJSON, "json", false, "print one JSON object instead of text")
		},
		run: runDoctor,
	})
}

// doctorReport is the JSON shape of `warden doctor --json`.
type doctorReport struct {
	Warden  string         `json:"warden"`
	Go      string         `json:"go"`
	OS      string         `json:"os"`
	Arch    string         `json:"arch"`
	Sandbox sandbox.Report `json:"sandbox"`
	Env     doctorEnv      `json:"environment"`
	Reads   doctorReads    `json:"reads"`
	Caches  doctorCaches   `json:"caches"`
	Config  doctorConfig   `json:"config"`
	Model   doctorModel    `json:"model"`
	Network doctorNetwork  `json:"network"`
	Roots   doctorRoots    `json:"writable_roots"`
	Rules   doctorRules    `json:"rules"`
	// Interrupted is what this run did about changes killed Wardens left.
	Interrupted doctorInterrupted `json:"interrupted_changes"`
	Undo        doctorUndo        `json:"undo"`

	// Fallback says why this machine refuses namespaces and what lifts it
	// (absent when it does not).
	Fallback *doctorFallback `json:"fallback,omitempty"`
}

// doctorEnv is the rule that filters every command's environment.
type doctorEnv struct {
	// Dropped are the name patterns (shell globs, any case) and Except the
	// names among them that are kept; DroppedValues says which values are
	// dropped whatever the name.
	Dropped       []string `json:"dropped_names"`
	Except        []string `json:"except_names"`
	DroppedValues string   `json:"dropped_values"`
	// Keep is config's env_keep: kept although the filter matches them.
	Keep []string `json:"env_keep"`
	// ConfigError says why env_keep could not be read, if it could not.
	ConfigError string `json:"config_error,omitempty"`
}

func envRule() doctorEnv {
	e := doctorEnv{Dropped: sandbox.SecretEnvNames, Except: sandbox.SecretEnvExceptions,
		DroppedValues: sandbox.SecretEnvValueRule, Keep: []string{}}
	cfg, err := config.Load(config.File())
	if err != nil {
		e.ConfigError = err.Error()
		return e
	}
	if len(cfg.EnvKeep) > 0 {
		e.Keep = cfg.EnvKeep
	}
	return e
}

func runDoctor(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) > 0 {
		return usageError(env, "doctor", "unexpected argument %q", args[0])
	}
	rep := doctorReport{Warden: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Sandbox: sandbox.Diagnose(ctx, ""), Env: envRule()}
	rep.Fallback = fallbackReport(rep.Sandbox)
	rep.Reads = readRule(rep.Sandbox.Mechanism)
	rep.Caches = cacheReport()
	rep.Config, rep.Model = modelReport(ctx)
	rep.Network = networkReport(rep.Sandbox.Mechanism)
	rep.Roots = rootsReport()
	rep.Rules = rulesReport()
	rep.Interrupted = interruptedReport()
	rep.Undo = undoReport()
	if doctorJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(env.stderr, "warden doctor: %v\n", err)
			return 1
		}
		return 0
	}
	printDoctor(env.stdout, rep)
	return 0
}

func printDoctor(w io.Writer, rep doctorReport) {
	s := rep.Sandbox
	fmt.Fprintf(w, "warden %s, %s, %s/%s\n", rep.Warden, rep.Go, rep.OS, rep.Arch)
	if s.Kernel.Kernel != "" {
		fmt.Fprintf(w, "kernel %s; Landlock ABI %d; seccomp filters %s; running as %s\n",
			s.Kernel.Kernel, s.Kernel.LandlockABI, yesNo(s.Kernel.Seccomp), map[bool]string{true: "root", false: "an unprivileged user"}[s.Kernel.Root])
	}
	var ns []string
	for _, n := range []string{"user", "mount", "pid", "net", "ipc"} {
		if why := s.Namespaces[n]; why != "" {
			ns = append(ns, n+" no ("+why+")")
		} else {
			ns = append(ns, n+" yes")
		}
	}
	fmt.Fprintf(w, "namespaces: %s\n", strings.Join(ns, ", "))
	mech := s.Mechanism
	if mech == "" {
		mech = "none"
	}
	fmt.Fprintf(w, "\nsandbox for workspace-write, network off: %s\nself-test: %s\n", mech, s.SelfTest)
	for _, l := range s.Layers {
		state := "enforced"
		if !l.Enforced {
			state = "NOT enforced"
		}
		fmt.Fprintf(w, "\n%s: %s — %s\n", l.Name, state, l.Detail)
		for _, c := range l.Covers {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
	if len(s.NotEnforced) > 0 {
		fmt.Fprintln(w, "\nnot enforced on this machine:")
		for _, g := range s.NotEnforced {
			fmt.Fprintf(w, "  - %s\n", g)
		}
	}
	if s.Refused != "" {
		fmt.Fprintf(w, "\nsandboxed commands are refused here: %s\n", s.Refused)
	}
	printFallback(w, rep.Fallback)
	printNetwork(w, rep.Network)
	printReads(w, rep.Reads)
	printRoots(w, rep.Roots)
	printRules(w, rep.Rules)
	printCaches(w, rep.Caches)
	e := rep.Env
	fmt.Fprintln(w, "\nenvironment: every command's variables, sandboxed or not, minus secrets:")
	fmt.Fprintf(w, "  - dropped names (any case): %s\n", strings.Join(e.Dropped, " "))
	fmt.Fprintf(w, "  - except: %s\n", strings.Join(e.Except, " "))
	fmt.Fprintf(w, "  - dropped whatever the name: %s\n", e.DroppedValues)
	switch {
	case e.ConfigError != "":
		fmt.Fprintf(w, "  - env_keep: unknown, the config does not load: %s\n", e.ConfigError)
	case len(e.Keep) == 0:
		fmt.Fprintln(w, "  - env_keep (config.toml): none; name a variable there to give it back to commands")
	default:
		fmt.Fprintf(w, "  - env_keep (config.toml) keeps: %s\n", strings.Join(e.Keep, " "))
	}
	printModel(w, rep.Config, rep.Model)
	printInterrupted(w, rep.Interrupted)
	printUndo(w, rep.Undo)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
