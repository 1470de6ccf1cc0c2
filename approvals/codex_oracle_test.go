package approvals

import (
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/wardenhq/warden/approvals/rules"
	"mvdan.cc/sh/v3/syntax"
)

// The Codex oracle: Codex's known-safe heuristic and its decision for a
// command no rule covers, re-implemented from reference/codex-approvals.md
// §3c and §4 (the version with read-only git), to measure Warden against.
// It is test code only: Warden never calls it.

// codexDecision is Codex's render_decision_for_unmatched_command for a
// workspace-write sandbox and no escalation request.
func codexDecision(argv []string, ask AskForApproval) rules.Decision {
	switch {
	case codexKnownSafe(argv) && ask == Untrusted:
		return rules.Allow
	case codexDangerous(argv):
		if ask == Never {
			return rules.Forbidden
		}
		return rules.Prompt
	case ask == Never || ask == OnFailure:
		return rules.Allow
	case ask == Untrusted:
		return rules.Prompt
	}
	return rules.Allow
}

// codexKnownSafe is is_known_safe_command: zsh is read as bash; a plain
// command is judged by its words, a `bash -lc` script only when it splits
// into plain commands that are each safe.
func codexKnownSafe(argv []string) bool {
	if len(argv) > 0 && argv[0] == "zsh" {
		argv = append([]string{"bash"}, argv[1:]...)
	}
	if codexSafeToExec(argv) {
		return true
	}
	cmds, ok := codexPlainCommands(argv)
	if !ok || len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if !codexSafeToExec(c) {
			return false
		}
	}
	return true
}

// codexPlainCommands splits `bash|zsh|sh -c|-lc SCRIPT` into its commands
// when the script is only plain words joined by && || ; and |: no
// parentheses, redirections, substitutions, variables or assignments.
func codexPlainCommands(argv []string) ([][]string, bool) {
	if len(argv) != 3 || (argv[1] != "-c" && argv[1] != "-lc") {
		return nil, false
	}
	switch argv[0] {
	case "bash", "zsh", "sh":
	default:
		return nil, false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(argv[2]), "")
	if err != nil {
		return nil, false
	}
	var cmds [][]string
	var stmt func(s *syntax.Stmt) bool
	stmt = func(s *syntax.Stmt) bool {
		if s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 {
			return false
		}
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 {
				return false
			}
			var words []string
			for _, w := range c.Args {
				lit, ok := codexPlainWord(w)
				if !ok {
					return false
				}
				words = append(words, lit)
			}
			cmds = append(cmds, words)
			return true
		case *syntax.BinaryCmd:
			switch c.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe:
				return stmt(c.X) && stmt(c.Y)
			}
		}
		return false
	}
	for _, s := range f.Stmts {
		if !stmt(s) {
			return nil, false
		}
	}
	return cmds, true
}

// codexPlainWord accepts words made of literal text and quoted strings
// without expansions (tree-sitter's word, string, raw_string,
// concatenation); globs and braces stay literal words.
func codexPlainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\") {
				b.WriteString(strings.ReplaceAll(p.Value, "\\", ""))
				continue
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

var codexSafeNames = map[string]bool{
	"cat": true, "cd": true, "cut": true, "echo": true, "expr": true, "false": true, "grep": true,
	"head": true, "id": true, "ls": true, "nl": true, "paste": true, "pwd": true, "rev": true,
	"seq": true, "stat": true, "tail": true, "tr": true, "true": true, "uname": true, "uniq": true,
	"wc": true, "which": true, "whoami": true,
}

var codexSedRange = regexp.MustCompile(`^[0-9]+(,[0-9]+)?p$`)

// codexSafeToExec is is_safe_to_call_with_exec.
func codexSafeToExec(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := filepath.Base(argv[0])
	args := argv[1:]
	if codexSafeNames[name] {
		return true
	}
	switch name {
	case "numfmt", "tac":
		return runtime.GOOS == "linux"
	case "base64":
		for _, a := range args {
			if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
				return false
			}
		}
		return true
	case "find":
		for _, a := range args {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf":
				return false
			}
		}
		return true
	case "rg":
		for _, a := range args {
			if a == "--search-zip" || a == "-z" || a == "--pre" || strings.HasPrefix(a, "--pre=") ||
				a == "--hostname-bin" || strings.HasPrefix(a, "--hostname-bin=") {
				return false
			}
		}
		return true
	case "sed":
		return (len(argv) == 3 || len(argv) == 4) && argv[1] == "-n" && codexSedRange.MatchString(argv[2])
	case "git":
		return codexGitSafe(args)
	}
	return false
}

// codexGitSafe: status, log, diff, show and a listing branch, with no
// global option that changes the repository or config and no option that
// writes or runs a program.
func codexGitSafe(args []string) bool {
	if len(args) == 0 {
		return false
	}
	if strings.HasPrefix(args[0], "-") {
		return false // every global option is treated as unsafe
	}
	sub, rest := args[0], args[1:]
	for _, a := range rest {
		if a == "--output" || strings.HasPrefix(a, "--output=") || a == "--ext-diff" || a == "--textconv" ||
			a == "--exec" || strings.HasPrefix(a, "--exec=") {
			return false
		}
	}
	switch sub {
	case "status", "log", "diff", "show":
		return true
	case "branch":
		for _, a := range rest {
			switch {
			case a == "--list" || a == "-l" || a == "--show-current" || a == "-a" || a == "--all" || a == "-r" ||
				a == "--remotes" || a == "-v" || a == "-vv" || a == "--verbose" || strings.HasPrefix(a, "--format="):
			default:
				return false
			}
		}
		return true
	}
	return false
}

// codexDangerous is command_might_be_dangerous: rm with -f/--force (also
// through sudo), or any literal command of a shell script that is.
func codexDangerous(argv []string) bool {
	if codexRmForce(argv) {
		return true
	}
	if len(argv) == 3 && (argv[0] == "bash" || argv[0] == "sh" || argv[0] == "zsh") && (argv[1] == "-c" || argv[1] == "-lc") {
		f, err := syntax.NewParser().Parse(strings.NewReader(argv[2]), "")
		if err != nil {
			return false
		}
		found := false
		syntax.Walk(f, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok {
				var words []string
				for _, w := range c.Args {
					lit, ok := codexPlainWord(w)
					if !ok {
						break
					}
					words = append(words, lit)
				}
				found = found || codexRmForce(words)
			}
			return !found
		})
		return found
	}
	return false
}

func codexRmForce(argv []string) bool {
	if len(argv) > 0 && argv[0] == "sudo" {
		return codexRmForce(argv[1:])
	}
	if len(argv) == 0 || argv[0] != "rm" {
		return false
	}
	for _, a := range argv[1:] {
		if a == "--" {
			return false
		}
		if a == "--force" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f")) {
			return true
		}
	}
	return false
}
