package command

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords bounds what one word's brace expansion may produce before
// the analyser gives up on it.
const maxBraceWords = 1024

// word is one argument as the shell would pass it.
type word struct {
	text    string
	literal bool
}

// words returns what one word of a command becomes: brace expansion
// (`{rm,-rf,build}` is three words) and the script's positional parameters
// ("$1", "$@") when they are known; otherwise its literal value, or its
// source text when it is computed at run time.
func (a *Analysis) words(w *syntax.Word, pos []string) []word {
	if vals, quoted, ok := positional(w, pos); ok {
		out := make([]word, 0, len(vals))
		for _, v := range vals {
			if !quoted && v == "" {
				continue // an empty unquoted expansion is no word at all
			}
			// Unquoted, a value is split and globbed again.
			out = append(out, word{v, quoted || !strings.ContainsAny(v, " \t\n*?[")})
		}
		return out
	}
	cp := *w // SplitBraces rewrites the word it is given
	if !syntax.SplitBraces(&cp) {
		s, ok := WordLiteral(w)
		return []word{{s, ok}}
	}
	var out []word
	for ew, err := range expand.BracesSeq(nil, &cp) {
		if err != nil || len(out) == maxBraceWords {
			a.Problems = append(a.Problems, "a brace expansion makes too many words")
			s, _ := WordLiteral(w)
			return []word{{s, false}}
		}
		s, ok := WordLiteral(ew)
		out = append(out, word{s, ok})
	}
	return out
}

// positional expands a word that is exactly $N, ${N}, $@, $* or one of
// those in double quotes, when the script's arguments are known.
func positional(w *syntax.Word, pos []string) (vals []string, quoted, ok bool) {
	if pos == nil || len(w.Parts) != 1 {
		return nil, false, false
	}
	part := w.Parts[0]
	if dq, isDQ := part.(*syntax.DblQuoted); isDQ {
		if len(dq.Parts) != 1 {
			return nil, false, false
		}
		part, quoted = dq.Parts[0], true
	}
	pe, isPE := part.(*syntax.ParamExp)
	if !isPE || !plainParam(pe) {
		return nil, false, false
	}
	name := pe.Param.Value
	switch {
	case name == "@" || name == "*" && !quoted:
		return append([]string(nil), pos[1:]...), quoted, true
	case name == "*":
		return []string{strings.Join(pos[1:], " ")}, true, true
	case len(name) == 1 && name[0] >= '0' && name[0] <= '9':
		n := int(name[0] - '0')
		switch {
		case n < len(pos):
			return []string{pos[n]}, quoted, true
		case quoted:
			return []string{""}, true, true
		}
		return nil, false, true // unset and unquoted: no word at all
	}
	return nil, false, false
}

// plainParam reports $name or ${name} with no operator.
func plainParam(pe *syntax.ParamExp) bool {
	return pe.Param != nil && pe.Flags == nil && !pe.Excl && !pe.Length && !pe.Width && !pe.IsSet &&
		pe.NestedParam == nil && pe.Index == nil && pe.Slice == nil && pe.Repl == nil && pe.Exp == nil &&
		pe.Names == 0 && pe.Split == 0 && pe.GlobSubst == 0 && pe.RcExpand == 0
}

// hiddenCode names constructs whose effect the analyser cannot see: bash
// evaluates arithmetic (let, ((...)), $((...)), [[ x -eq y ]], subscripts)
// recursively, so a value such as 'a[$(cmd)]' runs cmd; ${!x} and ${x@P}
// expand a value a second time; zsh glob qualifiers *(e:cmd:) and
// expansion flags ${(e)x} run code. A script containing one is never
// known-safe.
func hiddenCode(n syntax.Node, lang syntax.LangVariant) string {
	switch n := n.(type) {
	case *syntax.LetClause:
		return "evaluates arithmetic (let), which can run commands Warden does not see"
	case *syntax.ArithmCmd:
		return "evaluates arithmetic ((( ))), which can run commands Warden does not see"
	case *syntax.ArithmExp:
		return "evaluates arithmetic ($(( ))), which can run commands Warden does not see"
	case *syntax.CStyleLoop:
		return "evaluates arithmetic (for (( ))), which can run commands Warden does not see"
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			return "compares numbers in [[ ]], which evaluates arithmetic that can run commands Warden does not see"
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			return "tests a variable in [[ ]], whose subscript can run commands Warden does not see"
		}
	case *syntax.ParamExp:
		if n.Excl || n.Flags != nil || n.NestedParam != nil || n.Slice != nil || n.GlobSubst != 0 ||
			n.Index != nil && !plainIndex(n.Index) ||
			n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
			return "a parameter expansion (" + nodeSource(n) + ") can run commands Warden does not see"
		}
	case *syntax.Word:
		if lang == syntax.LangZsh {
			for _, p := range n.Parts {
				if lit, ok := p.(*syntax.Lit); ok && strings.ContainsAny(lit.Value, "()") {
					return "a zsh pattern or glob qualifier (" + lit.Value + ") can run code Warden does not see"
				}
			}
		}
	}
	return ""
}

// plainIndex reports a subscript that is a number, @ or *.
func plainIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	s, lit := WordLiteral(w)
	return lit && (s == "@" || s == "*" || IsDigits(s))
}

func nodeSource(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}

// movesPositional reports a script that changes its own $1... (shift,
// set), so they cannot be read off the shell's arguments.
func movesPositional(f *syntax.File) bool {
	moves := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			name, lit := WordLiteral(call.Args[0])
			if lit && (name == "shift" || name == "set") {
				moves = true
			}
		}
		return !moves
	})
	return moves
}
