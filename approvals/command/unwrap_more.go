package command

import (
	"strings"
)

// moreWrapperSpecs are the option grammars of wrappers that run their
// operands as a command: in another namespace or root directory, as a
// systemd unit, in a D-Bus session, or under a tracer or confiner. None is
// transparent: each changes what the command may touch or writes files of
// its own (strace -o, valgrind --log-file, a unit's state).
var moreWrapperSpecs = map[string]wrapperSpec{
	"unshare": {shortValue: "RwSG", known: "muinpUCTfrcRwSGhV",
		longValue: set("propagation", "setgroups", "root", "wd", "setuid", "setgid", "monotonic", "boottime"),
		longFlags: set("mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "fork", "map-user", "map-group",
			"map-root-user", "map-current-user", "map-auto", "map-users", "map-groups", "kill-child", "mount-proc",
			"mount-binfmt", "keep-caps", "help", "version")},
	// -m[FILE], -r[DIR], -w[DIR]: optional values, attached only.
	"nsenter": {shortValue: "tSGW", known: "atmuinpCUTSGrwWFZhV",
		longValue: set("target", "setuid", "setgid", "wdns", "env"),
		longFlags: set("all", "mount", "uts", "ipc", "net", "pid", "cgroup", "user", "time", "root", "wd", "no-fork",
			"preserve-credentials", "follow-context", "user-parent", "keep-caps", "join-cgroup", "help", "version")},
	// chroot NEWROOT [COMMAND...]: the root directory comes first.
	"chroot": {operands: 1, longValue: set("groups", "userspec"), longFlags: set("skip-chdir", "help", "version")},
	// systemd-run -S starts an interactive shell, no command.
	"systemd-run": {shortValue: "HMupE", known: "hHMupdrtPqGSE", harmful: "E", noCommand: "S",
		longValue: set("host", "machine", "unit", "property", "description", "slice", "service-type", "uid", "gid",
			"nice", "working-directory", "setenv", "path-property", "socket-property", "timer-property", "on-active",
			"on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar", "json"),
		longFlags: set("help", "version", "no-ask-password", "user", "system", "scope", "slice-inherit", "no-block",
			"remain-after-exit", "wait", "send-sighup", "same-dir", "pty", "pipe", "quiet", "collect", "shell",
			"on-timezone-change", "on-clock-change", "expand-environment", "ignore-failure", "background"),
		noCommandLong: set("shell")},
	"dbus-run-session": {longValue: set("dbus-daemon", "config-file"), longFlags: set("help", "version")},
	"strace": {shortValue: "abeEIOoPpSsUuX", known: "ACDEIOPSTUVXYZabcdefhiknopqrstuvwxyz",
		longValue: set("attach", "columns", "const-print-style", "env", "output", "string-limit", "summary-columns",
			"summary-sort-by", "summary-syscall-overhead", "trace-path", "user", "interruptible", "detach-on"),
		longFlags: set("abbrev", "absolute-timestamps", "daemonize", "debug", "decode-fds", "decode-pids",
			"failed-only", "fault", "follow-forks", "help", "inject", "instruction-pointer", "kvm", "no-abbrev",
			"output-append-mode", "output-separately", "quiet", "raw", "read", "relative-timestamps", "seccomp-bpf",
			"signal", "stack-traces", "status", "strings-in-hex", "successful-only", "summary", "summary-only",
			"summary-wall-clock", "syscall-number", "syscall-times", "tips", "trace", "verbose", "version", "write",
			"timestamps", "syscall-limit", "kill-on-exit", "secontext", "decode-exit", "always-show-pid")},
	"ltrace": {shortValue: "aADeFlnopsuwx", known: "aAbcCDeFfhiLlnoprsStuwxV",
		longValue: set("align", "indent", "output", "library", "config"),
		longFlags: set("demangle", "help", "no-plt", "no-signals", "version")},
	// valgrind's long options always carry their value after '='.
	"valgrind":  {known: "dhqv", anyLong: true},
	"catchsegv": {},
	// firejail's options are all one word (--private, --net=none, --profile=x).
	"firejail": {anyLong: true},
	"bwrap": {longArity: map[string]int{
		"bind": 2, "bind-try": 2, "ro-bind": 2, "ro-bind-try": 2, "dev-bind": 2, "dev-bind-try": 2, "symlink": 2,
		"setenv": 2, "file": 2, "bind-data": 2, "ro-bind-data": 2, "chmod": 2, "bind-fd": 2, "ro-bind-fd": 2,
		"overlay": 3, "unsetenv": 1, "chdir": 1, "uid": 1, "gid": 1, "hostname": 1, "tmpfs": 1, "proc": 1, "dev": 1,
		"dir": 1, "mqueue": 1, "remount-ro": 1, "exec-label": 1, "file-label": 1, "lock-file": 1, "sync-fd": 1,
		"info-fd": 1, "json-status-fd": 1, "block-fd": 1, "userns-block-fd": 1, "seccomp": 1, "add-seccomp-fd": 1,
		"cap-add": 1, "cap-drop": 1, "perms": 1, "size": 1, "argv0": 1, "userns": 1, "userns2": 1, "pidns": 1,
		"overlay-src": 1, "tmp-overlay": 1, "ro-overlay": 1,
	},
		longFlags: set("unshare-all", "share-net", "unshare-user", "unshare-user-try", "unshare-ipc", "unshare-pid",
			"unshare-net", "unshare-uts", "unshare-cgroup", "unshare-cgroup-try", "clearenv", "new-session",
			"die-with-parent", "as-pid-1", "disable-userns", "assert-userns-disabled", "help", "version", "level-prefix")},
}

// privileged reports a wrapper that runs its command as root or another
// user. systemd-run asks the system manager (root) unless --user comes
// before the command.
func privileged(w string, args, rest []string) bool {
	switch w {
	case "sudo", "doas", "pkexec", "su", "runuser":
		return true
	case "systemd-run":
		for _, a := range args[:len(args)-len(rest)] {
			if a == "--user" {
				return false
			}
		}
		return true
	}
	return false
}

// shellRun is the argv of a shell running script with args as $0, $1...
func shellRun(shell, script string, args ...string) []string {
	return append([]string{shell, "-c", script}, args...)
}

// unwrapSu reads `su [opts] [-] [USER [ARGS...]]` and runuser's two forms:
// the same, or `runuser [opts] -u USER [--] COMMAND...`. Options may come
// after USER (`su - postgres -c 'psql'`). -c/--command hands a script to
// the target's shell (-s picks it; sh stands for the login shell); without
// -c the shell runs ARGS, or an interactive shell (no command).
func unwrapSu(w string, args []string) (rest []string, ok bool) {
	ok = true
	script, hasScript := "", false
	shell, user := "sh", ""
	var operands []string
	value := func(i *int, attached string) string {
		if attached != "" {
			return attached
		}
		if *i+1 < len(args) {
			*i++
			return args[*i]
		}
		return ""
	}
loop:
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			break loop
		case a == "-":
			// A login shell.
		case strings.HasPrefix(a, "--"):
			name, v, _ := strings.Cut(a[2:], "=")
			switch name {
			case "command", "session-command":
				script, hasScript = value(&i, v), true
			case "shell":
				shell = value(&i, v)
			case "user":
				if w != "runuser" {
					ok = false
				}
				user = value(&i, v)
			case "group", "supp-group", "whitelist-environment":
				value(&i, v)
			case "login", "preserve-environment", "fast", "pty", "help", "version":
			default:
				ok = false
			}
		case len(a) > 1 && a[0] == '-':
		short:
			for j := 1; j < len(a); j++ {
				switch c := a[j]; c {
				case 'm', 'p', 'l', 'f', 'P', 'h', 'V':
				case 'c', 's', 'g', 'G', 'w', 'u':
					v := value(&i, a[j+1:])
					switch {
					case c == 'c':
						script, hasScript = v, true
					case c == 's':
						shell = v
					case c == 'u' && w == "runuser":
						user = v
					case c == 'u':
						ok = false
					}
					break short
				default:
					ok = false
				}
			}
		default:
			operands = append(operands, a)
		}
	}
	if shell == "" {
		shell, ok = "sh", false
	}
	switch {
	case user != "" && !hasScript:
		// runuser -u USER COMMAND...: the command itself, no shell.
		return operands, ok
	case user == "" && len(operands) > 0:
		operands = operands[1:] // the user
	}
	if hasScript {
		return shellRun(shell, script, operands...), ok
	}
	if len(operands) > 0 {
		return append([]string{shell}, operands...), ok
	}
	return nil, ok
}

var flockSpec = wrapperSpec{shortValue: "wE", known: "sexnoFuwEhV",
	longValue: set("timeout", "wait", "conflict-exit-code"),
	longFlags: set("shared", "exclusive", "nonblock", "nb", "close", "no-fork", "unlock", "verbose", "help", "version")}

// unwrapFlock reads `flock [opts] FILE COMMAND...` and `flock [opts] FILE
// -c SCRIPT` (the script goes to sh -c). `flock [opts] FD` runs nothing.
// Options end at the first operand. flock creates FILE when it is
// missing, so it is never transparent.
func unwrapFlock(args []string) (rest []string, ok bool) {
	rest, _, ok = unwrapSpec(flockSpec, args)
	if len(rest) < 2 {
		return nil, ok
	}
	if (rest[1] == "-c" || rest[1] == "--command") && len(rest) > 2 {
		return shellRun("sh", rest[2], rest[3:]...), ok
	}
	return rest[1:], ok
}

var watchSpec = wrapperSpec{shortValue: "nq", known: "bcdeghnpqrtwxv", transparent: true,
	longValue: set("interval", "equexit"),
	longFlags: set("beep", "color", "no-color", "differences", "errexit", "chgexit", "precise", "no-title",
		"no-wrap", "no-linewrap", "no-rerun", "exec", "help", "version")}

// unwrapWatch reads `watch [opts] COMMAND...`. Options end at the first
// operand. Without -x/--exec watch joins the words with spaces and runs
// them through sh -c, so `watch ls '$(rm -rf x)'` runs rm: the joined
// script is what is judged.
func unwrapWatch(args []string) (rest []string, transparent, ok bool) {
	rest, transparent, ok = unwrapSpec(watchSpec, args)
	if len(rest) == 0 {
		return nil, transparent, ok
	}
	for _, a := range args[:len(args)-len(rest)] {
		if a == "--exec" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(strings.TrimRight(a[1:], "0123456789."), 'x') >= 0) {
			return rest, transparent, ok
		}
	}
	return shellRun("sh", strings.Join(rest, " ")), transparent, ok
}

// unwrapScript reads `script [opts] [FILE]` (options anywhere): -c SCRIPT
// runs through the shell; without it an interactive shell runs. script
// writes a typescript file (FILE, ./typescript), so it is never
// transparent.
func unwrapScript(args []string) (rest []string, ok bool) {
	ok = true
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func(attached string) string {
			if attached != "" {
				return attached
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--":
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, v, _ := strings.Cut(a[2:], "=")
			switch name {
			case "command":
				return shellRun("sh", next(v)), ok
			case "log-in", "log-out", "log-io", "log-timing", "logging-format", "echo", "output-limit":
				next(v)
			case "timing", "append", "return", "flush", "force", "quiet", "help", "version":
			default:
				ok = false
			}
		case len(a) > 1 && a[0] == '-':
		short:
			for j := 1; j < len(a); j++ {
				switch c := a[j]; c {
				case 'a', 'e', 'f', 'q', 'h', 'V':
				case 't':
					break short // -t[FILE]: attached only
				case 'c', 'I', 'O', 'B', 'T', 'm', 'E', 'o':
					v := next(a[j+1:])
					if c == 'c' {
						return shellRun("sh", v), ok
					}
					break short
				default:
					ok = false
				}
			}
		}
	}
	return nil, ok
}

var parallelSpec = wrapperSpec{shortValue: "adEIjPLnNsSC", known: "0adEIjPLnNsSCkqrtuvXmhVeliDgp",
	longValue: set("arg-file", "delimiter", "eof", "replace", "jobs", "max-procs", "max-lines", "max-args",
		"max-replace-args", "max-chars", "sshlogin", "sshloginfile", "slf", "colsep", "joblog", "results", "res",
		"tmpdir", "env", "workdir", "wd", "timeout", "retries", "delay", "memfree", "load", "nice", "halt",
		"halt-on-error", "block", "block-size", "tagstring", "tag-string", "basefile", "bf", "transferfile", "tf",
		"return", "header", "trim", "shebang-wrap", "limit", "termseq", "arg-sep", "arg-file-sep", "resume-from"),
	longFlags: set("null", "keep-order", "quote", "no-run-if-empty", "tag", "verbose", "dry-run", "bar", "eta",
		"progress", "pipe", "pipepart", "group", "ungroup", "line-buffer", "will-cite", "citation", "shuf",
		"xargs", "version", "help", "cleanup", "transfer", "trc", "keep", "linebuffer", "lb", "files",
		"resume", "resume-failed", "retry-failed", "silent", "plus", "fg", "bg", "semaphore", "number-of-cpus",
		"number-of-cores", "no-notice", "round-robin", "roundrobin")}

// parallelSeparators start GNU parallel's argument sources.
var parallelSeparators = map[string]bool{":::": true, "::::": true, ":::+": true, "::::+": true}

// unwrapParallel reads GNU `parallel [opts] [COMMAND] [::: ARGS...]`.
// parallel runs each job through the shell: COMMAND's words joined by
// spaces, each argument quoted and put in for {} or appended. With one
// ::: list the jobs are spelled out; arguments from stdin or files (::::)
// are appended at run time (appends). With no COMMAND the arguments after
// ::: are the commands themselves.
func unwrapParallel(args []string) (rest []string, appends, ok bool) {
	rest, _, ok = unwrapSpec(parallelSpec, args)
	cmd, sources := rest, [][]string(nil)
	for i, a := range rest {
		if parallelSeparators[a] {
			if len(sources) == 0 {
				cmd = rest[:i]
			}
			sources = append(sources, nil)
			if a != ":::" && a != ":::+" {
				appends = true // :::: names files of arguments
			}
			continue
		}
		if len(sources) > 0 {
			sources[len(sources)-1] = append(sources[len(sources)-1], a)
		}
	}
	if len(sources) == 0 {
		appends = true // arguments from stdin
	}
	script := strings.Join(cmd, " ")
	if appends || len(sources) > 1 {
		if script == "" {
			return nil, true, false // the commands are read at run time
		}
		return shellRun("sh", script), true, ok
	}
	jobs := make([]string, 0, len(sources[0]))
	for _, arg := range sources[0] {
		switch {
		case script == "":
			jobs = append(jobs, arg)
		case strings.Contains(script, "{}"):
			jobs = append(jobs, strings.ReplaceAll(script, "{}", shellQuote(arg)))
		default:
			jobs = append(jobs, script+" "+shellQuote(arg))
		}
	}
	if len(jobs) == 0 {
		return nil, false, ok
	}
	return shellRun("sh", strings.Join(jobs, "\n")), false, ok
}

// unwrapSpec strips the options of spec, with no VAR=value words.
func unwrapSpec(spec wrapperSpec, args []string) (rest []string, transparent, ok bool) {
	var assigns bool
	return unwrapSimpleSpec(spec, args, &assigns)
}
