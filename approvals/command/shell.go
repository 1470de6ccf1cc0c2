package command

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandBytes is the largest command line Warden analyses. Anything
// bigger is not parsed at all and always needs the user.
const MaxCommandBytes = 256 << 10

// EmptyScript is the problem of `bash -lc ""`: nothing to judge, so it is
// put to the user (as Codex does).
const EmptyScript = "the shell script is empty"

// MaxShellDepth bounds how deep `bash -c "sh -c '...'"` nesting is followed.
const MaxShellDepth = 4

// Segment is one simple command found in a command line: the whole argv of a
// plain command, or one command of a shell script.
type Segment struct {
	// Argv holds the command's words with quotes removed. A word that is not
	// a plain literal (it expands a variable, a command substitution...) is
	// kept as its source text.
	Argv []string
	// Literal is true when every word is a plain literal, so Argv is exactly
	// what would run.
	Literal bool
	// Assigns is true for `VAR=value cmd`: the command runs with a changed
	// environment (LD_PRELOAD, PATH...).
	Assigns bool
	// Redirects are the segment's redirections to and from files.
	Redirects []Redirect
	// Nested is true when the command is a shell (possibly behind wrappers
	// such as `timeout 5 bash -c ...`) whose script was analysed into the
	// segments recorded before it: those are judged on their own.
	Nested bool
}

// Redirect is one redirection of a segment to or from a file.
type Redirect struct {
	Op      string // ">", ">>", "<", "&>"...
	Target  string // the file, or its source text when not literal
	Write   bool
	Literal bool
}

// WritesFile reports whether the redirect writes somewhere that matters
// (anything but /dev/null and the standard streams).
func (r Redirect) WritesFile() bool {
	if !r.Write {
		return false
	}
	switch r.Target {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return false
	}
	return true
}

// Analysis is what Warden understands of one command line.
type Analysis struct {
	Argv []string
	// Script is the shell script when Argv is `bash|sh|zsh -c|-lc SCRIPT`.
	Script string
	// Segments are the simple commands that would run, in source order.
	Segments []Segment
	// Problems say why the command cannot be fully understood, each in a few
	// words: a parse error, a variable command name, a function definition.
	// A command with problems is never known-safe.
	Problems []string
	// Assignments are the shell variables the script sets: `X=v cmd`,
	// `export X=v`, `X=v`.
	Assignments []Assignment
}

// Assignment is one shell variable set by a script.
type Assignment struct {
	Name, Value string
	Literal     bool // the value is written out, with no expansion
}

// Understood reports whether every command the line runs is known.
func (a *Analysis) Understood() bool { return len(a.Problems) == 0 && len(a.Segments) > 0 }

var shellNames = map[string]syntax.LangVariant{
	"bash": syntax.LangBash, "sh": syntax.LangBash, "dash": syntax.LangBash, "zsh": syntax.LangZsh,
	"ash": syntax.LangBash, "ksh": syntax.LangMirBSDKorn, "mksh": syntax.LangMirBSDKorn,
	"pdksh": syntax.LangMirBSDKorn, "oksh": syntax.LangMirBSDKorn, "lksh": syntax.LangMirBSDKorn,
	// Shells with a syntax of their own: their scripts are read as bash's,
	// which finds their commands (so `fish -c 'rm -rf x'` is dangerous), but
	// never counts as a full reading (see foreignShells).
	"fish": syntax.LangBash, "csh": syntax.LangBash, "tcsh": syntax.LangBash,
}

// foreignShells are the shells whose scripts Warden reads in bash's syntax
// as an approximation: never known-safe, never understood in full.
var foreignShells = map[string]bool{"fish": true, "csh": true, "tcsh": true}

// ShellScript returns the script and its dialect when argv is a shell
// invocation of the form `bash -c SCRIPT`, `bash -lc SCRIPT` or
// `bash -l -c SCRIPT` (sh, dash and zsh alike).
func ShellScript(argv []string) (string, syntax.LangVariant, bool) {
	if len(argv) < 3 || len(argv) > 4 {
		return "", 0, false
	}
	lang, ok := shellNames[filepath.Base(argv[0])]
	if !ok {
		return "", 0, false
	}
	flags := argv[1 : len(argv)-1]
	switch strings.Join(flags, " ") {
	case "-c", "-lc", "-cl", "-l -c", "--login -c":
		return argv[len(argv)-1], lang, true
	}
	return "", 0, false
}

// Analyze splits a command line into the simple commands it runs. A shell
// invocation's script is parsed as a syntax tree and every command in it is
// found, through && || ; | and newlines, subshells, $(...) and `...`,
// process substitutions and control structures.
func Analyze(argv []string) *Analysis {
	a := &Analysis{Argv: argv}
	size := 0
	for i, arg := range argv {
		size += len(arg) + 1
		if !utf8.ValidString(arg) {
			a.Problems = append(a.Problems, fmt.Sprintf("argument %d is not valid UTF-8", i))
		}
	}
	if len(argv) == 0 {
		a.Problems = append(a.Problems, "empty command")
		return a
	}
	if size > MaxCommandBytes {
		a.Problems = append(a.Problems, fmt.Sprintf("the command line is %d bytes; Warden analyses at most %d", size, MaxCommandBytes))
		a.Segments = []Segment{{Argv: []string{argv[0]}, Literal: true}}
		return a
	}
	if sc, ok := parseShell(argv); ok {
		a.Script = sc.Script
		a.addShell(sc, 0, true)
		return a
	}
	a.addSegment(Segment{Argv: argv, Literal: true}, 0)
	return a
}

// addShell analyses a shell's script. argsKnown is false when the shell
// gets more arguments at run time (xargs sh -c ...), so $1... are unknown.
func (a *Analysis) addShell(sc shellCall, depth int, argsKnown bool) {
	a.Problems = append(a.Problems, sc.Problems...)
	var pos []string
	if argsKnown {
		pos = sc.Args
		if len(pos) == 0 {
			pos = []string{"sh"} // $0 is the shell's name; no $1...
		}
	}
	a.addScript(sc.Script, sc.Lang, depth, pos)
}

// addSegment records one command. A shell it runs, directly or through
// Wrappers (`env -S 'sh -c ...'`, `timeout 5 bash -ec ...`), has its script
// analysed too, so what finally runs is judged.
func (a *Analysis) addSegment(seg Segment, depth int) {
	u := UnwrapFull(seg.Argv)
	sc, isShell := parseShell(u.Argv)
	switch {
	case !isShell:
	case !seg.Literal:
		a.Problems = append(a.Problems, "runs a shell script Warden cannot read in full")
	case depth >= MaxShellDepth:
		a.Problems = append(a.Problems, fmt.Sprintf("shells nested more than %d deep", MaxShellDepth))
	default:
		if a.Script == "" {
			a.Script = sc.Script
		}
		a.addShell(sc, depth+1, !u.Appends)
		direct := len(u.Wrappers) == 0
		if direct && len(seg.Redirects) == 0 && !seg.Assigns {
			return // its commands stand for it
		}
		if direct {
			seg.Argv = seg.Argv[:1]
		}
		seg.Nested = true
	}
	a.Segments = append(a.Segments, seg)
}

var parserPool = sync.Pool{New: func() any { return syntax.NewParser() }}

// addScript parses a script and records every command in it. pos holds $0,
// $1... when they are known.
func (a *Analysis) addScript(script string, lang syntax.LangVariant, depth int, pos []string) {
	p := parserPool.Get().(*syntax.Parser)
	syntax.Variant(lang)(p)
	f, err := p.Parse(strings.NewReader(script), "")
	parserPool.Put(p)
	if err != nil {
		a.Problems = append(a.Problems, "the shell cannot parse the script: "+err.Error())
		return
	}
	if len(f.Stmts) == 0 {
		// Codex asks about `bash -lc ""`: there is nothing to judge.
		a.Problems = append(a.Problems, EmptyScript)
		return
	}
	if pos != nil && movesPositional(f) {
		pos = nil
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if p := hiddenCode(n, lang); p != "" {
			a.Problems = append(a.Problems, p)
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background {
				a.Problems = append(a.Problems, "runs a background job (&)")
			}
			if n.Coprocess {
				a.Problems = append(a.Problems, "starts a coprocess")
			}
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				a.addCall(call, n.Redirs, depth, pos)
				// Walk on into the words to find $(...) inside them.
			} else if len(n.Redirs) > 0 {
				// Redirections on a compound command or a bare `> file`:
				// recorded on a no-op segment so the write is judged.
				rs := redirects(n.Redirs)
				for _, r := range rs {
					if r.Write {
						a.Segments = append(a.Segments, Segment{Argv: []string{":"}, Literal: true, Redirects: rs})
						break
					}
				}
			}
		case *syntax.FuncDecl:
			a.Problems = append(a.Problems, "defines a shell function")
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil {
				v, lit := WordLiteral(n.Value)
				a.Assignments = append(a.Assignments, Assignment{Name: n.Name.Value, Value: v, Literal: lit})
			}
		case *syntax.DeclClause:
			a.Problems = append(a.Problems, "declares variables ("+n.Variant.Value+")")
		case *syntax.CallExpr:
			if len(n.Args) == 0 && len(n.Assigns) > 0 {
				a.Problems = append(a.Problems, "assigns shell variables")
			}
		}
		return true
	})
}

func (a *Analysis) addCall(call *syntax.CallExpr, redirs []*syntax.Redirect, depth int, pos []string) {
	seg := Segment{Literal: true, Assigns: len(call.Assigns) > 0}
	for i, w := range call.Args {
		for j, word := range a.words(w, pos) {
			if !word.literal {
				seg.Literal = false
				if i == 0 && j == 0 {
					a.Problems = append(a.Problems, fmt.Sprintf("the command name %s is computed at run time", word.text))
				}
			}
			seg.Argv = append(seg.Argv, word.text)
		}
	}
	if len(seg.Argv) == 0 {
		// "$@" with no arguments: nothing runs.
		return
	}
	seg.Redirects = redirects(redirs)
	a.addSegment(seg, depth)
}

func redirects(rs []*syntax.Redirect) []Redirect {
	var out []Redirect
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		}
		target, lit := WordLiteral(r.Word)
		rd := Redirect{Op: r.Op.String(), Target: target, Literal: lit}
		switch r.Op {
		case syntax.RdrIn:
		case syntax.DplIn, syntax.DplOut:
			// 2>&1, >&2, <&-: a descriptor, not a file, unless bash's
			// `>&file` shorthand for `&>file`.
			if lit && (target == "-" || IsDigits(target)) {
				continue
			}
			rd.Write = r.Op == syntax.DplOut
		default:
			rd.Write = true
		}
		out = append(out, rd)
	}
	return out
}

func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// WordLiteral returns the word's value with quoting removed and true when it
// is a plain literal; otherwise its source text and false.
func WordLiteral(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return wordSource(w), false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return wordSource(w), false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return wordSource(w), false
		}
	}
	return b.String(), true
}

func wordSource(w *syntax.Word) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, w); err != nil {
		return "<expansion>"
	}
	return buf.String()
}

// unescapeUnquoted removes the backslashes of an unquoted word.
func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that are special inside "...".
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
