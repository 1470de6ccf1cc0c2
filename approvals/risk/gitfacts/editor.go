package gitfacts

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/safe"
	"mvdan.cc/sh/v3/syntax"
)

// EditorValueRisk grades the value of an editor setting (GIT_EDITOR,
// GIT_SEQUENCE_EDITOR, core.editor, sequence.editor). Git runs it through
// the shell with the file to edit appended: the commit message, or the
// rebase todo list in the git dir. Besides the programs ProgramValueRisk
// knows, it accepts the agents' usual non-interactive rebase, a sed that
// edits that one file in place with a script that only edits text
// (`GIT_SEQUENCE_EDITOR="sed -i 's/^pick/fixup/'" git rebase -i HEAD~3`):
// plain literal words, no other file, no w, r, e or W anywhere in the
// script. Anything else is a program Warden cannot analyse.
func EditorValueRisk(v string) ConfigRisk {
	if r := ProgramValueRisk(v); r != ConfigRuns {
		return r
	}
	argv, ok := plainWords(v)
	if !ok || len(argv) < 2 {
		return ConfigRuns
	}
	prog := argv[0]
	if strings.Contains(prog, "/") {
		if dir := filepath.Dir(prog); dir != "/usr/bin" && dir != "/bin" {
			return ConfigRuns // a sed the command may have written
		}
		prog = filepath.Base(prog)
	}
	if prog != "sed" || !sedEditsInPlaceOnly(argv[1:]) {
		return ConfigRuns
	}
	return configPlain
}

// plainWords splits a shell command line that is one simple command of
// plain literal words (quotes allowed; no expansion, substitution,
// redirection, assignment or operator) into its words.
func plainWords(s string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, false
	}
	var words []string
	for _, w := range call.Args {
		lit, ok := command.WordLiteral(w)
		if !ok {
			return nil, false
		}
		words = append(words, lit)
	}
	return words, len(words) > 0
}

// sedEditsInPlaceOnly accepts `sed -i [-E|-r] SCRIPT` and `sed -i [-E|-r]
// -e SCRIPT...`, in any order of the options: in place without a backup
// suffix, no file of its own (the one git appends is the only one), and a
// script that only edits text (sedScriptSafe).
func sedEditsInPlaceOnly(args []string) bool {
	inPlace := false
	var scripts []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-i" || a == "--in-place":
			inPlace = true
		case a == "-E" || a == "-r" || a == "--regexp-extended":
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false
			}
			scripts = append(scripts, args[i+1])
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
		case strings.HasPrefix(a, "-"):
			return false // -i.bak, -ie (suffix "e"), -f, -s, -n, and anything unknown
		case len(scripts) == 0:
			scripts = append(scripts, a)
		default:
			return false // a file of its own: it would edit that too
		}
	}
	return inPlace && len(scripts) > 0 && safe.SedScriptSafe(strings.Join(scripts, "\n"))
}
