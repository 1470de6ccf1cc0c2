package command

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellCall is a shell run with a script: `bash -c SCRIPT [ARG0 ARGS...]`,
// with any options before or after -c (`-ec`, `-e -c`, `--norc -c`,
// `-o pipefail -c`).
type shellCall struct {
	Script string
	Lang   syntax.LangVariant
	// Args are $0, $1... of the script.
	Args []string
	// Problems are options that run code Warden cannot see (an rc file, an
	// interactive shell's startup files and aliases) or that it does not
	// know.
	Problems []string
}

// shellLetters are the single-letter options of bash, dash and zsh that
// only change how the script runs. -i (interactive: startup files and
// aliases), -k (assignments anywhere on a line) and -s (commands from
// stdin) are left out on purpose.
const shellLetters = "abcefhlmnprtuvxBCDEHPT"

// parseShell recognises a shell invocation with a script. ok is false for
// anything else, including a shell that runs a file or reads stdin.
func parseShell(argv []string) (sc shellCall, ok bool) {
	if len(argv) < 2 { // `fish --command=SCRIPT` is two words
		return sc, false
	}
	lang, isShell := shellNames[filepath.Base(argv[0])]
	if !isShell {
		return sc, false
	}
	sc.Lang = lang
	name := filepath.Base(argv[0])
	if foreignShells[name] {
		sc.Problems = append(sc.Problems, "a "+name+" script, read as if it were bash's")
	}
	command := false
	var initCmds []string // fish -C/--init-command: code run before the script
	i := 1
options:
	for i < len(argv) {
		a := argv[i]
		switch {
		case a == "--" || a == "-":
			i++
			break options
		case strings.HasPrefix(a, "--"):
			i++
			long, value, hasValue := strings.Cut(a[2:], "=")
			if name == "fish" {
				switch long {
				case "command", "init-command":
					if !hasValue && i < len(argv) {
						value, hasValue = argv[i], true
						i++
					}
					if long == "init-command" {
						initCmds = append(initCmds, value)
					} else if hasValue {
						// --command=SCRIPT: the script is this word.
						command = true
						sc.Script, sc.Args = value, argv[i:]
						return fishScript(sc, initCmds), true
					}
					continue
				case "login", "interactive", "no-config", "no-execute", "private", "print-rusage-self":
					continue
				}
			}
			switch a[2:] {
			case "login", "noprofile", "norc", "posix", "restricted", "verbose", "noediting", "no-rcs":
			case "rcfile", "init-file":
				sc.Problems = append(sc.Problems, "the shell reads a startup file ("+a+")")
				i++
			default:
				sc.Problems = append(sc.Problems, "unknown shell option "+a)
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			i++
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					command = true
				case name == "fish" && c == 'C':
					if i < len(argv) {
						initCmds = append(initCmds, argv[i])
						i++
					}
				case c == 'o' || c == 'O':
					i++ // -o pipefail, -O extglob: the name is the next word
				case c == 'i':
					sc.Problems = append(sc.Problems, "an interactive shell (-i) runs startup files and aliases")
				case strings.ContainsRune(shellLetters, c):
				default:
					sc.Problems = append(sc.Problems, "unknown shell option -"+string(c))
				}
			}
		default:
			break options
		}
	}
	if !command || i >= len(argv) {
		return shellCall{}, false
	}
	sc.Script, sc.Args = argv[i], argv[i+1:]
	return fishScript(sc, initCmds), true
}

// fishScript puts fish's init commands before its script: they run first.
func fishScript(sc shellCall, initCmds []string) shellCall {
	if len(initCmds) > 0 {
		sc.Problems = append(sc.Problems, "fish runs init commands (-C) before the script")
		sc.Script = strings.Join(append(initCmds, sc.Script), "\n")
	}
	return sc
}
