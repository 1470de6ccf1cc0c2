package safe

import (
	"github.com/wardenhq/warden/approvals/command"
	"path/filepath"
	"runtime"
	"strings"
)

// KnownSafe reports whether every command the line runs is known to only
// read: the line was fully understood, no command writes to a file through a
// redirection or changes its environment, and each command is on the
// known-safe list.
func KnownSafe(a *command.Analysis) bool {
	if !a.Understood() {
		return false
	}
	for _, s := range a.Segments {
		if !SegmentKnownSafe(s) {
			return false
		}
	}
	return true
}

// SegmentKnownSafe reports whether this one command is known to only read. It is
// judged on what runs: through harmless wrappers (`timeout 5 ls`, `env -i
// ls`, `nice ls`), and a shell it starts is judged by the commands of its
// script, recorded as segments of their own.
func SegmentKnownSafe(s command.Segment) bool {
	if !s.Literal || s.Assigns {
		return false
	}
	for _, r := range s.Redirects {
		if r.WritesFile() || !r.Literal {
			return false
		}
	}
	u := command.UnwrapFull(s.Argv)
	switch {
	case !u.Transparent:
		return false
	case s.Nested:
		return true
	case len(u.Argv) == 0:
		return false
	case u.Argv[0] == "git" && len(u.Wrappers) > 0:
		// Hardening rewrites git only where it is the command itself.
		return false
	case u.Appends:
		// xargs: the input adds arguments, so only programs that are safe
		// whatever their arguments qualify.
		return safePrograms[u.Argv[0]]
	}
	return isKnownSafeArgv(u.Argv)
}

// safePrograms only read, whatever their arguments: none has an option
// that writes a file or runs a program. (uniq is not here: `uniq IN OUT`
// truncates OUT.)
var safePrograms = map[string]bool{
	":": true, "cat": true, "cd": true, "cut": true, "echo": true, "expr": true, "false": true,
	"grep": true, "head": true, "id": true, "ls": true, "nl": true, "paste": true, "pwd": true,
	"rev": true, "seq": true, "stat": true, "tail": true, "tr": true, "true": true, "uname": true,
	"wc": true, "which": true, "whoami": true, "comm": true, "tac": true, "type": true, "uptime": true,
	// jq reads the files it is given (--rawfile, --slurpfile, -f too) and
	// writes only its output; it has no way to run a program.
	"jq": true,
}

// versionProbes may be asked for their version and nothing else. cargo
// and rustc are not: under rustup, a workspace's rust-toolchain.toml may
// name a toolchain directory of its own, so `cargo --version` runs
// whatever binary the workspace holds.
var versionProbes = map[string]bool{
	"node": true, "npm": true, "go": true, "python": true,
	"python3": true, "gcc": true, "clang": true, "make": true, "git": true, "java": true,
}

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
		return sedSafe(argv[1:])
	case "sort":
		return sortSafe(argv[1:])
	case "du":
		return duSafe(argv[1:])
	case "file":
		return fileSafe(argv[1:])
	case "diff":
		return diffSafe(argv[1:])
	case "strings":
		return stringsSafe(argv[1:])
	case "tree":
		return treeSafe(argv[1:])
	case "xxd":
		return xxdSafe(argv[1:])
	case "realpath", "basename", "dirname", "readlink", "df", "free", "column",
		"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum":
		return true
	case "date":
		// -s/--set (and its abbreviations) set the clock.
		return getoptSafe(argv[1:], "s", "dfr", []string{"--date", "--file", "--reference"}, []string{"--set"})
	case "test", "[":
		// Not -v (bash's test evaluates an array subscript, which may run
		// a command substitution) nor the arithmetic comparisons.
		for _, a := range argv[1:] {
			switch a {
			case "-v", "-R", "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
				return false
			}
			if strings.ContainsAny(a, "[$`") && a != "[" {
				return false
			}
		}
		return true
	case "git":
		// Only as Warden runs it (see safety_git.go): with the programs a
		// repository's config could run disabled.
		return gitKnownSafe(argv)
	case "printf":
		// bash's printf -v assigns a variable (PATH, say) instead.
		return len(argv) > 1 && !strings.HasPrefix(argv[1], "-v")
	case "uniq":
		// `uniq [OPTION]... [INPUT [OUTPUT]]`: an OUTPUT operand is written.
		return len(OperandsOf(argv[1:], "fsw")) <= 1
	case "command":
		// `command -v NAME` prints where NAME is; it runs nothing.
		return len(argv) > 1 && (argv[1] == "-v" || argv[1] == "-V")
	}
	return false
}

// Dangerous reports whether any command in the line is on the dangerous
// list: `rm` with -f/--force, looked for through sudo and the other
// wrappers, inside find -exec, brace expansions and every command of a
// shell script (however its options are written). Dangerous commands
// always need the user, are refused under `never`, and are never offered
// an "Always allow" rule.
func Dangerous(a *command.Analysis) bool {
	for _, s := range a.Segments {
		if IsDangerousArgv(s.Argv) {
			return true
		}
	}
	return false
}

func IsDangerousArgv(argv []string) bool {
	u := command.UnwrapFull(argv)
	if forceRemove(u.Argv, u.Appends) {
		return true
	}
	if len(u.Argv) > 0 && filepath.Base(u.Argv[0]) == "find" {
		for _, cmd := range FindCommands(u.Argv[1:]) {
			if IsDangerousArgv(cmd) {
				return true
			}
		}
	}
	if u.Unsure {
		// An option Warden does not know may have hidden where the command
		// starts: look at every later word that names rm.
		for i := 1; i < len(argv); i++ {
			if filepath.Base(argv[i]) == "rm" && forceRemove(argv[i:], u.Appends) {
				return true
			}
		}
	}
	return false
}

// forceRemove reports `rm` with -f or --force. Under xargs the options
// come from the input too, so any rm without `--` counts.
func forceRemove(argv []string, appends bool) bool {
	if len(argv) == 0 || filepath.Base(argv[0]) != "rm" {
		return false
	}
	for _, a := range argv[1:] {
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
	return appends
}

// FindCommands returns the commands find runs with -exec, -execdir, -ok
// and -okdir.
func FindCommands(args []string) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			out = append(out, args[i+1:j])
			i = j
		}
	}
	return out
}

// OperandsOf returns the operands of a command line whose short options in
// valueOpts take a value (-f 2, -f2), so values are not taken for operands.
func OperandsOf(args []string, valueOpts string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case a == "-" || !strings.HasPrefix(a, "-"):
			out = append(out, a)
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--skip-fields", "--skip-chars", "--check-chars":
				i++ // the value is the next word
			}
		default:
			if j := strings.IndexAny(a[1:], valueOpts); j >= 0 && j == len(a)-2 {
				i++ // the value is the next word
			}
		}
	}
	return out
}
