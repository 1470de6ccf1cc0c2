package command

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// An allow rule matches words. Its grant (additional_permissions) goes to
// the command only when those words are all that runs: every word plain
// literal text, no assignment, no redirection but /dev/null and descriptor
// copies, no shell syntax beyond simple commands joined by ; && || |, and
// every program found outside the writable roots (where the sandboxed agent
// could have put its own). Anything else is judged as if the rule had not
// matched (see rule_apply.go). No rule ever takes a command out of the
// sandbox.

// PlainCheck holds what the plain-words check needs to know about where
// the command's programs would be found.
type PlainCheck struct {
	roots []string // writable roots, cleaned and, where possible, also symlink-resolved
	env   []string // the environment the command starts with
	path  string   // its PATH
	// seen are the simple commands found plain, keyed by commandKey.
	seen map[string]bool
	// memo answers the check's lookups: every program is looked for along
	// the same PATH, so each directory is resolved once per check, not
	// once per program (a check lives for one evaluation).
	memo *pathmemo.Memo
	// programs are the verdicts of program, by name (a script often runs
	// one program several times).
	programs map[string]string
}

// NewPlainCheck checks against roots, the directories the command (or an
// earlier one) could have written programs into; relative ones are ignored.
func NewPlainCheck(roots []string, env []string) *PlainCheck {
	c := &PlainCheck{env: env, path: EnvValue(env, "PATH"), seen: map[string]bool{}, memo: pathmemo.New(), programs: map[string]string{}}
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		c.roots = append(c.roots, r)
		if rr, err := c.memo.EvalSymlinks(r); err == nil && rr != r {
			c.roots = append(c.roots, rr)
		}
	}
	return c
}

// GrantBlocker says why an allow rule's grant may not go to the
// analysed command line, or "" when it is plain words running
// programs from outside every writable root. Every command the analysis
// found (and rules matched) must be one this check saw whole: one the
// analysis unwraps from another program (env, timeout…) is not.
func (c *PlainCheck) GrantBlocker(a *Analysis) string {
	size := 0
	for _, arg := range a.Argv {
		size += len(arg) + 1
		if !utf8.ValidString(arg) {
			return "an argument is not valid UTF-8"
		}
	}
	if size > MaxCommandBytes {
		return "the command line is too long to analyse"
	}
	if why := c.argv(a.Argv, 0); why != "" {
		return why
	}
	for _, seg := range a.Segments {
		if !c.seen[commandKey(seg.Argv)] {
			return fmt.Sprintf("%s runs inside another command", Display(seg.Argv))
		}
	}
	return ""
}

func commandKey(argv []string) string { return strings.Join(argv, "\x00") }

func (c *PlainCheck) argv(argv []string, depth int) string {
	if len(argv) == 0 {
		return "the command is empty"
	}
	if why := c.Program(argv[0]); why != "" {
		return why
	}
	c.seen[commandKey(argv)] = true
	script, lang, ok := ShellScript(argv)
	if !ok {
		// No shell: execve gets these words exactly as they are.
		return ""
	}
	if depth >= MaxShellDepth {
		return "shells are nested too deep to follow"
	}
	if why := c.shellStartup(argv); why != "" {
		return why
	}
	return c.script(script, lang, depth)
}

// script checks every node of a shell script against the plain subset.
func (c *PlainCheck) script(script string, lang syntax.LangVariant, depth int) string {
	p := parserPool.Get().(*syntax.Parser)
	syntax.Variant(lang)(p)
	f, err := p.Parse(strings.NewReader(script), "")
	parserPool.Put(p)
	if err != nil {
		return "the shell cannot parse the script"
	}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.File, *syntax.Comment:
			return true
		case *syntax.Stmt:
			switch {
			case n.Background:
				why = "the script starts a background job"
			case n.Coprocess:
				why = "the script starts a coprocess"
			}
			return why == ""
		case *syntax.BinaryCmd:
			// ; is a list of statements; && || | |& join two commands.
			return true
		case *syntax.CallExpr:
			why = c.call(n, depth)
			return false
		case *syntax.Redirect:
			why = redirectBlocker(n)
			return false
		}
		why = "the script uses " + syntaxName(n)
		return false
	})
	return why
}

func (c *PlainCheck) call(call *syntax.CallExpr, depth int) string {
	if len(call.Assigns) > 0 {
		if len(call.Args) == 0 {
			return "the script assigns shell variables"
		}
		if name := call.Assigns[0].Name; name != nil {
			return "the command sets " + name.Value
		}
		return "the command sets a variable"
	}
	argv := make([]string, len(call.Args))
	for i, w := range call.Args {
		s, why := plainWord(w)
		if why != "" {
			return why
		}
		argv[i] = s
	}
	if why := shellBuiltinBlocker(argv); why != "" || IsBuiltin(argv[0]) {
		if why == "" {
			c.seen[commandKey(argv)] = true
		}
		return why
	}
	return c.argv(argv, depth+1)
}

// plainWord returns the word's value when it is literal text the shell
// passes on unchanged, else why it is not.
func plainWord(w *syntax.Word) (string, string) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if why := unquotedBlocker(p.Value, i == 0, w); why != "" {
				return "", why
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return "", "a word uses $'…' escapes"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `a word uses $"…" translation`
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", "a word holds " + syntaxName(q)
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", "a word holds " + syntaxName(part)
		}
	}
	return b.String(), ""
}

// unquotedBlocker finds what the shell would expand in unquoted text:
// globs, braces, tildes (at the start of a word, or after = or : as bash
// does even in arguments), zsh's =cmd, and any $. Backslash-escaped
// characters are literal.
func unquotedBlocker(s string, first bool, w *syntax.Word) string {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' {
			i++
			continue
		}
		switch ch {
		case '*', '?':
			return "a word is a glob the shell expands (" + wordSource(w) + ")"
		case '[':
			if src := wordSource(w); strings.Contains(src[strings.Index(src, "[")+1:], "]") {
				return "a word is a glob the shell expands (" + wordSource(w) + ")"
			}
		case '{':
			if wordSource(w) != "{}" {
				return "a word holds braces the shell may expand (" + wordSource(w) + ")"
			}
		case '~':
			if (i == 0 && first) || (i > 0 && (s[i-1] == '=' || s[i-1] == ':')) {
				return "a word starts with ~, which the shell expands (" + wordSource(w) + ")"
			}
		case '=':
			if i == 0 && first {
				return "a word starts with =, which zsh expands (" + wordSource(w) + ")"
			}
		case '$':
			return "a word holds $ (" + wordSource(w) + ")"
		}
	}
	return ""
}

// redirectBlocker allows only /dev/null and copies or closes of descriptors
// (2>&1, >&2, 2>&-).
func redirectBlocker(r *syntax.Redirect) string {
	if r.N != nil && !IsDigits(r.N.Value) {
		return "a redirection names its descriptor with a variable ({fd})"
	}
	if r.Hdoc != nil || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
		return "the script feeds a here-document or here-string"
	}
	target, why := plainWord(r.Word)
	if why != "" {
		return "a redirection target is computed: " + why
	}
	if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && (target == "-" || IsDigits(target)) {
		return ""
	}
	if target != "/dev/null" {
		return fmt.Sprintf("the script redirects %s %s (only /dev/null may be)", r.Op, target)
	}
	return ""
}

// syntaxName names a node the plain subset does not allow, for reasons.
func syntaxName(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		return "a command substitution"
	case *syntax.ProcSubst:
		return "a process substitution"
	case *syntax.ParamExp:
		return "a parameter expansion"
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.CStyleLoop:
		return "arithmetic"
	case *syntax.LetClause:
		return "let"
	case *syntax.TestClause, *syntax.TestDecl:
		return "[[ … ]]"
	case *syntax.DeclClause:
		return n.Variant.Value
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.ExtGlob:
		return "an extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	case *syntax.Subshell:
		return "a subshell"
	case *syntax.Block:
		return "a { … } block"
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		return "control flow (if, while, for, case)"
	case *syntax.TimeClause:
		return "time"
	case *syntax.CoprocClause:
		return "coproc"
	case *syntax.ArrayExpr:
		return "an array"
	}
	return "shell syntax other than plain commands"
}

// bashBuiltins are run by the shell itself, not looked up on PATH. Only
// inertBuiltins may appear in a plain script: the rest run code from their
// words (eval, source, let 'a[$(…)]', read 'a[$(…)]'), change how later
// names resolve (hash, alias, enable -f), or set variables.
var bashBuiltins = strings.Fields(`. : [ alias bg bind break builtin caller cd command compgen complete
	compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help
	history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set
	shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait
	autoload bindkey chdir disable emulate float functions integer limit noglob nocorrect print rehash
	sched setopt unfunction unhash unlimit unsetopt vared whence where zcompile zle zmodload zstyle`)

var inertBuiltins = map[string]bool{":": true, "true": true, "false": true, "echo": true, "pwd": true, "cd": true, "printf": true, "test": true, "[": true}

// IsBuiltin reports whether bash runs name itself rather than a program.
func IsBuiltin(name string) bool {
	for _, b := range bashBuiltins {
		if b == name {
			return true
		}
	}
	return false
}

// shellBuiltinBlocker refuses builtins that are not inert, and the options
// of inert ones that evaluate a subscript (printf -v, test -v / -R).
func shellBuiltinBlocker(argv []string) string {
	name := argv[0]
	if !IsBuiltin(name) {
		return ""
	}
	if !inertBuiltins[name] {
		return fmt.Sprintf("the script runs the shell builtin %s", name)
	}
	for _, a := range argv[1:] {
		if (name == "printf" && strings.HasPrefix(a, "-v")) || ((name == "test" || name == "[") && (a == "-v" || a == "-R")) {
			return fmt.Sprintf("%s %s evaluates a variable name the shell may expand", name, a)
		}
	}
	return ""
}

// Program checks where name would be found: a path must be absolute, and
// the file it names, and every PATH directory searched before it is found,
// must lie outside the writable roots, symlinks resolved.
func (c *PlainCheck) Program(name string) string {
	if why, ok := c.programs[name]; ok {
		return why
	}
	why := c.lookProgram(name)
	c.programs[name] = why
	return why
}

func (c *PlainCheck) lookProgram(name string) string {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			return fmt.Sprintf("the program %s is named by a relative path", name)
		}
		return c.outsideRoots(name, "the program "+name)
	}
	for _, dir := range filepath.SplitList(c.path) {
		if !filepath.IsAbs(dir) {
			return fmt.Sprintf("PATH holds the relative directory %q", dir)
		}
		if why := c.outsideRoots(dir, "PATH directory "+dir); why != "" {
			// The sandbox can write there: it could plant name there.
			return why + fmt.Sprintf(", searched for %s", name)
		}
		full := filepath.Join(dir, name)
		if c.executable(full) {
			return c.outsideRoots(full, fmt.Sprintf("%s (found at %s)", name, full))
		}
	}
	return fmt.Sprintf("%s is not found on PATH", name)
}

// outsideRoots says what is wrong when p, as written or with symlinks
// resolved, lies inside a writable root (or cannot be resolved).
func (c *PlainCheck) outsideRoots(p, what string) string {
	p = filepath.Clean(p)
	if r := c.rootOf(p); r != "" {
		return fmt.Sprintf("%s is inside the writable root %s", what, r)
	}
	rp, err := c.memo.ResolvePrefix(p)
	if err != nil {
		return fmt.Sprintf("%s cannot be resolved: %v", what, err)
	}
	if r := c.rootOf(rp); r != "" {
		return fmt.Sprintf("%s resolves to %s, inside the writable root %s", what, rp, r)
	}
	return ""
}

func (c *PlainCheck) rootOf(p string) string {
	for _, r := range c.roots {
		if p == r || r == "/" || strings.HasPrefix(p, r+"/") {
			return r
		}
	}
	return ""
}

// shellStartup refuses a shell whose startup files could come from a
// writable root: a login shell (and every zsh) reads HOME's profile, and
// bash -c reads $BASH_ENV.
func (c *PlainCheck) shellStartup(argv []string) string {
	var files []string
	login := strings.Contains(strings.Join(argv[1:len(argv)-1], " "), "l")
	zsh := filepath.Base(argv[0]) == "zsh"
	if login || zsh {
		home := EnvValue(c.env, "HOME")
		if home == "" {
			return "the shell's startup files cannot be located: HOME is not set"
		}
		files = append(files, home)
	}
	if zsh {
		files = append(files, EnvValue(c.env, "ZDOTDIR"))
	}
	files = append(files, EnvValue(c.env, "BASH_ENV"), EnvValue(c.env, "ENV"))
	for _, f := range files {
		if f == "" {
			continue
		}
		if !filepath.IsAbs(f) {
			return fmt.Sprintf("the shell reads startup files from the relative path %s", f)
		}
		if r := c.rootOf(filepath.Clean(f)); r != "" {
			return fmt.Sprintf("the shell reads startup files from %s, inside the writable root %s", f, r)
		}
		if rf, err := c.memo.ResolvePrefix(f); err == nil {
			if r := c.rootOf(rf); r != "" {
				return fmt.Sprintf("the shell reads startup files from %s, inside the writable root %s", f, r)
			}
		}
	}
	return ""
}

// executable says whether p, links followed, is an executable file.
func (c *PlainCheck) executable(p string) bool {
	rp, err := c.memo.EvalSymlinks(p)
	if err != nil {
		return false
	}
	st, err := c.memo.Lstat(rp)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// EnvValue is the last value of key in env (KEY=VALUE strings).
func EnvValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
