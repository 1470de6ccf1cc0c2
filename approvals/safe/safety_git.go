package safe

import (
	"sort"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"mvdan.cc/sh/v3/syntax"
)

// git status, log, diff, show, blame, grep, ls-files, rev-parse and the
// other readers (gitReaders), and branch, tag, remote and stash when they
// only list, only read, but a repository's config can make them run
// programs: core.fsmonitor (status, diff, describe --dirty), core.pager
// and pager.<cmd>, diff drivers (diff.external, diff.<driver>.command,
// textconv, which blame and grep also take), log.showSignature and
// signature placeholders (gpg.program), hooks run when the index is
// rewritten. So
// they are known-safe only as Warden runs them: with those programs
// disabled by options Warden adds (hardenGit), which the command cannot
// undo (no -c of its own, no --ext-diff, --textconv, --output,
// --show-signature or %G placeholders, no pager forced), and only in a
// repository whose config the sandbox protects (gitStaysProtected).

// gitGlobalHardening goes right after `git`.
var gitGlobalHardening = []string{
	"--no-pager", "--no-optional-locks",
	"-c", "core.fsmonitor=", "-c", "core.pager=cat", "-c", "core.hooksPath=/dev/null",
	"-c", "log.showSignature=false",
}

// gitDiffHardening goes right after the subcommand of diff, log and show.
var gitDiffHardening = []string{"--no-ext-diff", "--no-textconv"}

// gitSubHardening are the options that go right after each known-safe
// subcommand: the diff drivers off where the subcommand shows diffs or
// converts contents (blame and grep take textconv, not ext-diff).
var gitSubHardening = map[string][]string{
	"diff": gitDiffHardening, "log": gitDiffHardening, "show": gitDiffHardening,
	"blame": {"--no-textconv"}, "grep": {"--no-textconv"},
}

// gitReaders are the subcommands that only read once hardened, beyond the
// ones whose arguments need a closer look (branch, tag, remote, stash).
var gitReaders = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "blame": true, "grep": true,
	"rev-parse": true, "ls-files": true, "ls-tree": true, "describe": true, "rev-list": true,
	"shortlog": true, "show-ref": true, "merge-base": true, "name-rev": true, "cat-file": true,
	"for-each-ref": true, "count-objects": true, "cherry": true,
}

// gitHardeningValue are the -c values of gitGlobalHardening: a command
// may repeat them (Warden's come first, so a later -c could override them
// only with these same values).
var gitHardeningValue = func() map[string]bool {
	m := map[string]bool{}
	for i, a := range gitGlobalHardening {
		if a == "-c" && i+1 < len(gitGlobalHardening) {
			m[gitGlobalHardening[i+1]] = true
		}
	}
	return m
}()

// gitSafeGlobals are the global options a known-safe git command may use
// (-C takes a directory, judged by gitStaysProtected like the cwd).
var gitSafeGlobals = map[string]bool{
	"--no-pager": true, "-P": true, "--no-optional-locks": true, "--literal-pathspecs": true,
	"--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-replace-objects": true,
}

// gitUnsafeLong are the subcommand options that write a file, run a
// program or force a pager; with abbreviations (git's option parser takes
// unique prefixes).
var gitUnsafeLong = []string{"--output", "--ext-diff", "--textconv", "--exec", "--show-signature", "--paginate", "--open-files-in-pager", "--filters"}

// gitSubcommand returns the index in argv of a known-safe git command's
// subcommand, or -1. argv[0] must be git itself.
func gitSubcommand(argv []string) int {
	if len(argv) < 2 || argv[0] != "git" {
		return -1
	}
	i := 1
	for ; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		switch {
		case gitSafeGlobals[argv[i]]:
		case argv[i] == "-C" && i+1 < len(argv) && argv[i+1] != "":
			i++
		case argv[i] == "-c" && i+1 < len(argv) && gitHardeningValue[argv[i+1]]:
			i++ // Warden's own value, written by the model: changes nothing
		default:
			return -1 // -c, --config-env, --git-dir, --work-tree, --exec-path, -p...
		}
	}
	if i >= len(argv) {
		return -1
	}
	if gitReaders[argv[i]] || argv[i] == "branch" || argv[i] == "tag" || argv[i] == "remote" || argv[i] == "stash" {
		return i
	}
	return -1
}

// gitKnownSafe: a git command that only reads once hardened.
func gitKnownSafe(argv []string) bool {
	i := gitSubcommand(argv)
	if i < 0 {
		return false
	}
	sub, args := argv[i], argv[i+1:]
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") && longOptionAbbrev(a, gitUnsafeLong...) {
			return false
		}
		// %G? %GS %GK...: pretty formats that verify signatures (gpg.program).
		if strings.Contains(a, "%G") {
			return false
		}
		// grep -O[pager]: opens the matches in a program.
		if sub == "grep" && strings.HasPrefix(a, "-O") {
			return false
		}
	}
	switch sub {
	case "branch":
		return gitBranchListing(args)
	case "tag":
		return gitTagListing(args)
	case "remote":
		// Listing the remotes and their URLs; `remote show` contacts them.
		return len(args) == 0 || len(args) == 1 && (args[0] == "-v" || args[0] == "--verbose") ||
			len(args) == 2 && args[0] == "get-url"
	case "stash":
		// The list only: `stash list -p` would show diffs unhardened.
		return len(args) == 1 && args[0] == "list"
	}
	return true
}

// gitTagListing: `git tag` only listing tags (no name to create, no -d,
// -a, -s, -m, -f, -v).
func gitTagListing(args []string) bool {
	return gitListing(args, func(a string) bool {
		return strings.HasPrefix(a, "-n") && strings.Trim(a[2:], "0123456789") == "" ||
			a == "-i" || a == "--ignore-case" || a == "--omit-empty" || a == "--no-column"
	})
}

// gitBranchListing: `git branch` only listing branches (no name to create,
// no -d, -m, -c, --set-upstream-to, --edit-description...).
func gitBranchListing(args []string) bool {
	return gitListing(args, func(a string) bool {
		switch a {
		case "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--no-color",
			"-i", "--ignore-case", "--omit-empty", "--no-column", "--abbrev":
			return true
		}
		return strings.HasPrefix(a, "--abbrev=")
	})
}

// gitListing: git branch or git tag with only listing options: plain says
// the subcommand's own options that take no value; the filters, --format,
// --sort, --color and --column are common. Operands are patterns only with
// -l/--list (else they name a branch or tag to create).
func gitListing(args []string, plain func(string) bool) bool {
	list := false
	var operands int
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "--list" || a == "-l":
			list = true
		case plain(a), name == "--color", name == "--column":
		case name == "--format" || name == "--sort" ||
			name == "--contains" || name == "--no-contains" || name == "--merged" || name == "--no-merged" || name == "--points-at":
			if !hasValue {
				i++ // the value is the next word
			}
		case strings.HasPrefix(a, "-"):
			return false
		default:
			operands++
		}
	}
	return operands == 0 || list
}

// hardenGitArgv inserts the hardening options into one known-safe git
// command.
func hardenGitArgv(argv []string) []string {
	i := gitSubcommand(argv)
	out := append([]string{argv[0]}, gitGlobalHardening...)
	out = append(out, argv[1:i+1]...)
	out = append(out, gitSubHardening[argv[i]]...)
	return append(out, argv[i+1:]...)
}

// IsGitSegment: a command of the line that is git run directly (the only
// form hardenGit can rewrite).
func IsGitSegment(s command.Segment) bool { return len(s.Argv) > 0 && s.Argv[0] == "git" }

// HardenGit returns the argv Warden runs so that every known-safe git
// command in the line has the hardening options, or nil when there is none.
// ok is false when some known-safe git command cannot be rewritten (it sits
// in a shell nested in the script, behind a wrapper...): such a command is
// then not known-safe.
func HardenGit(a *command.Analysis) (run []string, ok bool) {
	want := 0
	for _, s := range a.Segments {
		if IsGitSegment(s) && s.Literal && gitKnownSafe(s.Argv) {
			want++
		}
	}
	if want == 0 {
		return nil, true
	}
	if gitKnownSafe(a.Argv) {
		return hardenGitArgv(a.Argv), want == 1
	}
	script, lang, isShell := command.ShellScript(a.Argv)
	if !isShell || a.Script != script {
		return nil, false
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, false
	}
	type insert struct {
		at   uint
		text string
	}
	var inserts []insert
	found := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		call, isCall := n.(*syntax.CallExpr)
		if !isCall || len(call.Args) == 0 {
			return true
		}
		argv := make([]string, 0, len(call.Args))
		for _, w := range call.Args {
			lit, literal := command.WordLiteral(w)
			if !literal {
				return true
			}
			argv = append(argv, lit)
		}
		if !gitKnownSafe(argv) {
			return true
		}
		i := gitSubcommand(argv)
		found++
		inserts = append(inserts, insert{call.Args[0].End().Offset(), " " + strings.Join(gitGlobalHardening, " ")})
		if h := gitSubHardening[argv[i]]; len(h) > 0 {
			inserts = append(inserts, insert{call.Args[i].End().Offset(), " " + strings.Join(h, " ")})
		}
		return true
	})
	if found != want {
		return nil, false
	}
	sort.SliceStable(inserts, func(i, j int) bool { return inserts[i].at < inserts[j].at })
	var b strings.Builder
	last := uint(0)
	for _, in := range inserts {
		b.WriteString(script[last:in.at])
		b.WriteString(in.text)
		last = in.at
	}
	b.WriteString(script[last:])
	run = append([]string(nil), a.Argv...)
	run[len(run)-1] = b.String()
	return run, true
}
