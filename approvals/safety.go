package approvals

import (
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// KnownSafe reports whether every command the line runs is known to only
// read: the line was fully understood, no command writes to a file through a
// redirection or changes its environment, and each command is on the
// known-safe list.
func (a *Analysis) KnownSafe() bool {
	if !a.Understood() {
		return false
	}
	for _, s := range a.Segments {
		if !s.KnownSafe() {
			return false
		}
	}
	return true
}

// KnownSafe reports whether this one command is known to only read.
func (s Segment) KnownSafe() bool {
	if !s.Literal || s.Assigns {
		return false
	}
	for _, r := range s.Redirects {
		if r.writesFile() || !r.Literal {
			return false
		}
	}
	return isKnownSafeArgv(s.Argv)
}

var safePrograms = map[string]bool{
	":": true, "cat": true, "cd": true, "cut": true, "echo": true, "expr": true, "false": true,
	"grep": true, "head": true, "id": true, "ls": true, "nl": true, "paste": true, "pwd": true,
	"rev": true, "seq": true, "stat": true, "tail": true, "tr": true, "true": true, "uname": true,
	"uniq": true, "wc": true, "which": true, "whoami": true,
}

// versionProbes may be asked for their version and nothing else.
var versionProbes = map[string]bool{
	"cargo": true, "rustc": true, "node": true, "npm": true, "go": true, "python": true,
	"python3": true, "gcc": true, "clang": true, "make": true, "git": true, "java": true,
}

var sedPrintRange = regexp.MustCompile(`^[0-9]+(,[0-9]+)?p$`)

// isKnownSafeArgv is the known-safe list, program by program. The program
// must be named bare (not /tmp/ls) so a look-alike binary cannot pass.
func isKnownSafeArgv(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	prog := argv[0]
	if safePrograms[prog] {
		return true
	}
	if versionProbes[prog] && len(argv) == 2 {
		switch argv[1] {
		case "--version", "-v", "-V", "version":
			return prog != "node" || argv[1] != "version"
		}
	}
	switch prog {
	case "numfmt", "tac":
		return runtime.GOOS == "linux"
	case "base64":
		for _, a := range argv[1:] {
			if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
				return false
			}
		}
		return true
	case "find":
		for _, a := range argv[1:] {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf":
				return false
			}
		}
		return true
	case "rg":
		for _, a := range argv[1:] {
			switch {
			case a == "--pre", strings.HasPrefix(a, "--pre="),
				a == "--hostname-bin", strings.HasPrefix(a, "--hostname-bin="),
				a == "--search-zip", a == "-z":
				return false
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'z'):
				return false // -z inside a cluster such as -iz
			}
		}
		return true
	case "sed":
		// Only `sed -n N[,M]p [file]`: printing a range of lines.
		return (len(argv) == 3 || len(argv) == 4) && argv[1] == "-n" && sedPrintRange.MatchString(argv[2])
	}
	// git is never known-safe: even `git status` or `git log` can run
	// repository-configured programs (core.fsmonitor, core.pager, textconv).
	return false
}

// wrappers run their arguments as a command; dangerous and risk checks look
// through them.
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nice": true, "nohup": true, "timeout": true,
	"time": true, "command": true, "exec": true, "xargs": true, "stdbuf": true, "ionice": true,
	"chrt": true, "taskset": true, "setsid": true, "pkexec": true,
}

// Unwrap strips wrapper programs (sudo, env, nice, timeout, xargs...) and
// their options from argv, returning the command they run and the wrappers
// seen, outermost first.
func Unwrap(argv []string) (inner []string, seen []string) {
	for len(argv) > 0 && wrappers[filepath.Base(argv[0])] {
		w := filepath.Base(argv[0])
		seen = append(seen, w)
		argv = argv[1:]
	opts:
		for len(argv) > 0 {
			a := argv[0]
			switch {
			case a == "--":
				argv = argv[1:]
				break opts
			case strings.HasPrefix(a, "-"):
				argv = argv[1:]
				// Options that take a value in the next word.
				if optionTakesValue(w, a) && len(argv) > 0 {
					argv = argv[1:]
				}
			case w == "env" && strings.Contains(a, "="):
				argv = argv[1:]
			case (w == "timeout" || w == "nice" || w == "taskset" || w == "chrt") && looksNumeric(a):
				argv = argv[1:]
			default:
				break opts
			}
		}
	}
	return argv, seen
}

func optionTakesValue(wrapper, opt string) bool {
	switch wrapper {
	case "sudo":
		return opt == "-u" || opt == "-g" || opt == "-C" || opt == "-D" || opt == "-h" || opt == "-p" || opt == "-r" || opt == "-t" || opt == "-U"
	case "env":
		return opt == "-u" || opt == "-C" || opt == "-S"
	case "nice":
		return opt == "-n"
	case "timeout":
		return opt == "-s" || opt == "-k" || opt == "--signal" || opt == "--kill-after"
	case "xargs":
		return opt == "-I" || opt == "-n" || opt == "-P" || opt == "-L" || opt == "-d" || opt == "-s" || opt == "-a" || opt == "-E"
	case "ionice":
		return opt == "-c" || opt == "-n" || opt == "-p"
	case "stdbuf":
		return opt == "-i" || opt == "-o" || opt == "-e"
	}
	return false
}

func looksNumeric(s string) bool {
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

// Dangerous reports whether any command in the line is on the dangerous
// list: today `rm` with -f/--force, looked for through sudo and other
// wrappers and inside every command of a shell script. Dangerous commands
// always need the user, are refused under `never`, and are never offered an
// "Always allow" rule.
func (a *Analysis) Dangerous() bool {
	for _, s := range a.Segments {
		if isDangerousArgv(s.Argv) {
			return true
		}
	}
	return false
}

func isDangerousArgv(argv []string) bool {
	inner, _ := Unwrap(argv)
	if len(inner) == 0 {
		return false
	}
	if filepath.Base(inner[0]) != "rm" {
		return false
	}
	for _, a := range inner[1:] {
		if a == "--" {
			return false
		}
		if a == "--force" {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'f') {
			return true
		}
	}
	return false
}
