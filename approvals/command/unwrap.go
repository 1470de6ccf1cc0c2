package command

import (
	"path/filepath"
	"strings"

	"github.com/google/shlex"
)

// Wrappers run their arguments as a command; known-safe, dangerous and risk
// checks look through them so that `nice rm -rf x` is judged as `rm -rf x`.
var Wrappers = map[string]bool{
	"sudo": true, "doas": true, "pkexec": true, "env": true, "nice": true, "nohup": true,
	"timeout": true, "time": true, "command": true, "builtin": true, "exec": true, "xargs": true,
	"stdbuf": true, "ionice": true, "chrt": true, "taskset": true, "setsid": true, "busybox": true,
	// Programs that run a command as another user, in another namespace,
	// root or unit, under a lock or a tracer, or hand it to a shell
	// (unwrap_more.go).
	"su": true, "runuser": true, "flock": true, "watch": true, "script": true, "parallel": true,
	"unshare": true, "nsenter": true, "chroot": true, "systemd-run": true, "dbus-run-session": true,
	"strace": true, "ltrace": true, "valgrind": true, "catchsegv": true, "firejail": true, "bwrap": true,
}

// Unwrapped is what a chain of wrappers runs.
type Unwrapped struct {
	// Argv is the command that finally runs (nil when a wrapper runs none,
	// as in `ionice -p PID` or `command -v ls`).
	Argv []string
	// Wrappers are the wrapper programs seen, outermost first.
	Wrappers []string
	// Transparent is true when every wrapper only changes how the command
	// runs (time limit, priority, buffering, a cleared environment), not
	// what it may touch: `timeout 5 ls` is as harmless as `ls`, while
	// `sudo ls`, `nohup ls` (writes nohup.out) or `env LD_PRELOAD=x ls` is
	// not. Unknown wrapper options make it false.
	Transparent bool
	// Appends is true when the command gets more arguments at run time
	// (xargs), so its visible argv is only a prefix of what runs.
	Appends bool
	// Unsure is true when an option was not recognised, so Argv may be
	// misplaced; dangerous checks then also look further along the line.
	Unsure bool
	// Assigns is true when a wrapper sets environment variables for the
	// command (env NAME=value, sudo NAME=value), as `NAME=value cmd` does.
	Assigns bool
	// Privileged are the wrappers seen that run the command as root or
	// another user (sudo, su, runuser, systemd-run without --user...).
	Privileged []string
}

// Unwrap strips wrapper programs (sudo, env, nice, timeout, xargs...) and
// their options from argv, returning the command they run and the wrappers
// seen, outermost first.
func Unwrap(argv []string) (inner []string, seen []string) {
	u := UnwrapFull(argv)
	return u.Argv, u.Wrappers
}

// maxWrappers bounds `env env env ...` and env -S splitting.
const maxWrappers = 16

func UnwrapFull(argv []string) Unwrapped {
	u := Unwrapped{Argv: argv, Transparent: true}
	for len(u.Argv) > 0 && Wrappers[filepath.Base(u.Argv[0])] {
		if len(u.Wrappers) == maxWrappers {
			u.Transparent, u.Unsure = false, true
			return u
		}
		w := filepath.Base(u.Argv[0])
		if w == "command" && hasCommandQuery(u.Argv[1:]) {
			// `command -v NAME` only prints where NAME is.
			return u
		}
		u.Wrappers = append(u.Wrappers, w)
		var rest []string
		var transparent, ok bool
		switch w {
		case "env":
			var assigns bool
			rest, transparent, ok, assigns = unwrapEnv(u.Argv[1:])
			u.Assigns = u.Assigns || assigns
		case "xargs":
			u.Appends = true
			rest, transparent, ok = unwrapXargs(u.Argv[1:])
		case "su", "runuser":
			rest, ok = unwrapSu(w, u.Argv[1:])
		case "flock":
			rest, ok = unwrapFlock(u.Argv[1:])
		case "watch":
			rest, transparent, ok = unwrapWatch(u.Argv[1:])
		case "script":
			rest, ok = unwrapScript(u.Argv[1:])
		case "parallel":
			var appends bool
			rest, appends, ok = unwrapParallel(u.Argv[1:])
			u.Appends = u.Appends || appends
		default:
			rest, transparent, ok = unwrapSimple(w, u.Argv[1:], &u.Assigns)
		}
		if privileged(w, u.Argv[1:], rest) {
			u.Privileged = append(u.Privileged, w)
			transparent = false
		}
		u.Transparent = u.Transparent && transparent && ok
		u.Unsure = u.Unsure || !ok
		u.Argv = rest
	}
	return u
}

// hasCommandQuery reports `command -v`/`-V`, which run nothing.
func hasCommandQuery(args []string) bool {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return false
		}
		if strings.ContainsAny(a[1:], "vV") {
			return true
		}
	}
	return false
}

// wrapperSpec describes a wrapper's command line: the short options that
// take a value, the long ones that do, the options that keep it harmless,
// and how many operands come before the command.
type wrapperSpec struct {
	shortValue    string          // letters whose option takes a value
	longValue     map[string]bool // --name VALUE or --name=VALUE
	longArity     map[string]int  // --name V1 V2...: long options with several values (bwrap)
	anyLong       bool            // every --name[=value] is one word (valgrind, firejail)
	known         string          // every short letter it has
	longFlags     map[string]bool // long options without a value
	harmful       string          // short letters that make it not transparent
	harmLong      map[string]bool // long names that make it not transparent
	noCommand     string          // short letters after which no command runs (pid modes)
	noCommandLong map[string]bool // long names after which no command runs
	operands      int             // numeric operands before the command (timeout's duration)
	assigns       bool            // accepts VAR=value before the command (sudo)
	numericOption bool            // -NUMBER is an option (nice -10)
	transparent   bool
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var wrapperSpecs = map[string]wrapperSpec{
	"sudo": {shortValue: "CDghprtTUu", known: "AbBCDEeHhiKklLNnPprSsTtUuVv",
		longValue: set("chdir", "chroot", "close-from", "command-timeout", "group", "host", "other-user", "prompt", "role", "type", "user"),
		longFlags: set("askpass", "background", "bell", "edit", "help", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "preserve-env", "shell", "stdin", "validate", "version", "set-home"),
		assigns:   true},
	"doas":   {shortValue: "Cu", known: "Cnsu", noCommand: "C"},
	"pkexec": {longValue: set("user"), longFlags: set("disable-internal-agent", "keep-cwd")},
	"nice":   {shortValue: "n", known: "n", longValue: set("adjustment"), transparent: true, numericOption: true},
	"nohup":  {},
	"timeout": {shortValue: "ks", known: "fkpsv", operands: 1, transparent: true,
		longValue: set("kill-after", "signal"), longFlags: set("foreground", "preserve-status", "verbose")},
	"time": {shortValue: "fo", known: "afopqv", harmful: "o", harmLong: set("output"), transparent: true,
		longValue: set("format", "output"), longFlags: set("append", "portability", "quiet", "verbose")},
	"command": {known: "p", transparent: true},
	"builtin": {transparent: true},
	"exec":    {shortValue: "a", known: "acl", transparent: true},
	"stdbuf": {shortValue: "eio", known: "eio", transparent: true,
		longValue: set("error", "input", "output")},
	"ionice": {shortValue: "cnpPu", known: "cnpPtu", noCommand: "pPu", transparent: true,
		longValue: set("class", "classdata", "pid", "pgid", "uid"), longFlags: set("ignore"),
		noCommandLong: set("pid", "pgid", "uid")},
	"chrt": {shortValue: "DPT", known: "abdDfimopPrRTv", noCommand: "p", operands: 1,
		longValue:     set("sched-deadline", "sched-period", "sched-runtime"),
		longFlags:     set("all-tasks", "batch", "deadline", "fifo", "idle", "max", "other", "pid", "rr", "reset-on-fork", "verbose"),
		noCommandLong: set("pid")},
	"taskset": {known: "acp", noCommand: "p", operands: 1,
		longFlags: set("all-tasks", "cpu-list", "pid"), noCommandLong: set("pid")},
	"setsid":  {known: "cfw", transparent: true, longFlags: set("ctty", "fork", "wait")},
	"busybox": {},
}

func init() {
	for name, spec := range moreWrapperSpecs {
		wrapperSpecs[name] = spec
	}
}

// unwrapSimple strips one wrapper described by wrapperSpecs. ok is false
// when an option was not recognised.
func unwrapSimple(w string, args []string, assigns *bool) (rest []string, transparent, ok bool) {
	return unwrapSimpleSpec(wrapperSpecs[w], args, assigns)
}

func unwrapSimpleSpec(spec wrapperSpec, args []string, assigns *bool) (rest []string, transparent, ok bool) {
	transparent, ok = spec.transparent, true
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			return skipOperands(spec, args), transparent, ok
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, _, hasValue := strings.Cut(a[2:], "=")
			args = args[1:]
			switch {
			case spec.longValue[name]:
				if !hasValue && len(args) > 0 {
					args = args[1:]
				}
			case spec.longArity[name] > 0:
				for i := 0; i < spec.longArity[name] && len(args) > 0; i++ {
					args = args[1:]
				}
			case spec.longFlags[name], spec.anyLong:
			default:
				transparent, ok = false, false
			}
			if spec.harmLong[name] {
				transparent = false
			}
			if spec.noCommandLong[name] {
				return nil, false, ok
			}
		case len(a) > 1 && a[0] == '-' && !(spec.numericOption && LooksNumeric(a[1:])):
			args = args[1:]
			for i := 1; i < len(a); i++ {
				c := a[i]
				if !strings.ContainsRune(spec.known, rune(c)) {
					transparent, ok = false, false
				}
				if strings.ContainsRune(spec.harmful, rune(c)) {
					transparent = false
				}
				if strings.ContainsRune(spec.noCommand, rune(c)) {
					return nil, false, ok
				}
				if strings.ContainsRune(spec.shortValue, rune(c)) {
					if i == len(a)-1 && len(args) > 0 {
						args = args[1:] // -n 10
					}
					break // -n10: the rest of the word is the value
				}
			}
		case spec.numericOption && len(a) > 1 && a[0] == '-':
			args = args[1:] // the old form nice -10
		case spec.assigns && isAssignment(a):
			transparent, *assigns = false, true
			args = args[1:]
		default:
			return skipOperands(spec, args), transparent, ok
		}
	}
	return nil, transparent, ok
}

// skipOperands drops the numeric operands that come before the command
// (timeout's duration, chrt's priority, taskset's mask).
func skipOperands(spec wrapperSpec, args []string) []string {
	for i := 0; i < spec.operands && len(args) > 0; i++ {
		args = args[1:]
	}
	return args
}

// isAssignment reports a NAME=value word.
func isAssignment(a string) bool {
	name, _, ok := strings.Cut(a, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unwrapEnv strips env's options and assignments. -S/--split-string splits
// its value into words that env then reads as more options, assignments
// and the command, so they are judged like any other words.
func unwrapEnv(args []string) (rest []string, transparent, ok, assigns bool) {
	transparent, ok = true, true
	splits := 0
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		var split string
		hasSplit := false
		switch {
		case a == "--":
			return args, transparent, ok, assigns
		case a == "-":
			// The same as -i: an empty environment.
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, value, hasValue := strings.Cut(a[2:], "=")
			switch name {
			case "ignore-environment", "null", "debug", "list-signal-handling":
			case "default-signal", "ignore-signal", "block-signal":
			case "unset", "chdir", "argv0":
				if !hasValue && len(args) > 0 {
					args = args[1:]
				}
			case "split-string":
				if !hasValue && len(args) > 0 {
					value, args = args[0], args[1:]
				}
				split, hasSplit = value, true
			default:
				transparent, ok = false, false
			}
		case len(a) > 1 && a[0] == '-':
		short:
			for i := 1; i < len(a); i++ {
				switch c := a[i]; c {
				case 'i', '0', 'v':
				case 'u', 'C', 'a', 'S':
					value := a[i+1:]
					if value == "" && len(args) > 0 {
						value, args = args[0], args[1:]
					}
					if c == 'S' {
						split, hasSplit = value, true
					}
					break short
				default:
					transparent, ok = false, false
				}
			}
		case isAssignment(a):
			transparent, assigns = false, true // the command runs with a changed environment
		default:
			return append([]string{a}, args...), transparent, ok, assigns
		}
		if hasSplit {
			splits++
			words, err := shlex.Split(split)
			if err != nil || strings.ContainsAny(split, "$\\") || splits > maxWrappers {
				// env expands ${VAR} and its own escapes: not read as written.
				transparent = false
				if err != nil {
					words = strings.Fields(split)
				}
			}
			args = append(words, args...)
		}
	}
	return nil, transparent, ok, assigns
}

// unwrapXargs strips xargs's options; the command it runs (echo when none
// is named) gets its input as extra arguments.
func unwrapXargs(args []string) (rest []string, transparent, ok bool) {
	transparent, ok = true, true
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			if len(args) == 0 {
				return []string{"echo"}, transparent, ok
			}
			return args, transparent, ok
		case strings.HasPrefix(a, "--") && len(a) > 2:
			args = args[1:]
			name, _, hasValue := strings.Cut(a[2:], "=")
			switch name {
			case "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var":
				if !hasValue && len(args) > 0 {
					args = args[1:]
				}
				if name == "process-slot-var" {
					transparent = false // sets a variable in the command's environment
				}
			case "null", "interactive", "no-run-if-empty", "open-tty", "verbose", "exit", "show-limits",
				"eof", "replace", "max-lines":
			default:
				transparent, ok = false, false
			}
		case len(a) > 1 && a[0] == '-':
			args = args[1:]
		short:
			for i := 1; i < len(a); i++ {
				switch a[i] {
				case '0', 'o', 'p', 'r', 't', 'x':
				case 'e', 'i', 'l':
					break short // optional value, attached only
				case 'a', 'd', 'E', 'I', 'L', 'n', 'P', 's':
					if i == len(a)-1 && len(args) > 0 {
						args = args[1:]
					}
					break short
				default:
					transparent, ok = false, false
				}
			}
		default:
			return args, transparent, ok
		}
	}
	return []string{"echo"}, transparent, ok
}

func LooksNumeric(s string) bool {
	if s == "" {
		return false
	}
	if s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && !strings.ContainsRune("smhd", c) {
			return false
		}
	}
	return true
}
