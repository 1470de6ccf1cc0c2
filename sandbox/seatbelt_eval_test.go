package sandbox

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// sbpl is a generated profile parsed back, to ask it what Seatbelt would
// decide: rules in order, the last one that matches wins, (deny default)
// when none does. It knows the filters Warden writes (subpath, literal,
// regex, param, require-all/any/not, vnode-type) and fails the test on any
// other, so it cannot silently read a rule as matching nothing.
type sbpl struct {
	t      *testing.T
	rules  []sbplRule
	params map[string]string
}

type sbplRule struct {
	allow   bool
	ops     []string
	filters []any
}

func parseSBPL(t *testing.T, profile string, params []string) *sbpl {
	t.Helper()
	s := &sbpl{t: t, params: map[string]string{}}
	for _, p := range params {
		k, v, ok := strings.Cut(strings.TrimPrefix(p, "-D"), "=")
		if !ok || !strings.HasPrefix(p, "-D") {
			t.Fatalf("bad parameter %q", p)
		}
		s.params[k] = v
	}
	forms := sexprs(t, profile)
	for _, f := range forms {
		l, ok := f.([]any)
		if !ok || len(l) == 0 {
			t.Fatalf("top-level form %v", f)
		}
		head, _ := l[0].(sym)
		if head != "allow" && head != "deny" {
			continue // version
		}
		r := sbplRule{allow: head == "allow"}
		for _, x := range l[1:] {
			if op, ok := x.(sym); ok {
				r.ops = append(r.ops, string(op))
			} else {
				r.filters = append(r.filters, x)
			}
		}
		s.rules = append(s.rules, r)
	}
	return s
}

// allowed is Seatbelt's decision for op (file-write* or file-read*) on path.
func (s *sbpl) allowed(op, path string) bool {
	allow := false
	for _, r := range s.rules {
		if !containsOp(r.ops, op) {
			continue
		}
		if len(r.filters) == 0 || s.anyMatch(r.filters, path) {
			allow = r.allow
		}
	}
	return allow
}

func containsOp(ops []string, op string) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

func (s *sbpl) anyMatch(fs []any, path string) bool {
	for _, f := range fs {
		if s.match(f, path) {
			return true
		}
	}
	return false
}

func (s *sbpl) match(f any, path string) bool {
	l, ok := f.([]any)
	if !ok || len(l) < 2 {
		s.t.Fatalf("filter %v", f)
	}
	switch l[0].(sym) {
	case "require-all":
		for _, x := range l[1:] {
			if !s.match(x, path) {
				return false
			}
		}
		return true
	case "require-any":
		return s.anyMatch(l[1:], path)
	case "require-not":
		return !s.match(l[1], path)
	case "vnode-type", "target", "global-name", "socket-domain", "remote":
		return false
	case "subpath":
		p := s.value(l[1])
		return path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/")
	case "literal":
		return path == s.value(l[1])
	case "regex":
		return sbplRegex(s.t, s.value(l[1])).MatchString(path)
	}
	s.t.Fatalf("unknown filter %v", l[0])
	return false
}

func (s *sbpl) value(x any) string {
	switch v := x.(type) {
	case str:
		return string(v)
	case raw:
		return string(v)
	case []any:
		if len(v) == 2 && v[0] == sym("param") {
			if p, ok := s.params[string(v[1].(str))]; ok {
				return p
			}
			s.t.Fatalf("undefined parameter %v", v[1])
		}
	}
	s.t.Fatalf("value %v", x)
	return ""
}

// sbplRegex compiles a Seatbelt regex as Go reads it: POSIX ERE syntax only
// (CompilePOSIX rejects Perl-only forms such as \d or (?:)), and with
// . matching a newline as POSIX's does.
func sbplRegex(t *testing.T, re string) *regexp.Regexp {
	t.Helper()
	if _, err := regexp.CompilePOSIX(re); err != nil {
		t.Fatalf("regex %q is not POSIX ERE: %v", re, err)
	}
	return regexp.MustCompile("(?s)" + re)
}

type (
	sym string
	str string
	raw string
)

// sexprs reads the profile's forms: lists, symbols, "strings" and #"raw
// strings" (which Seatbelt's reader takes up to the next quote), ; comments.
func sexprs(t *testing.T, src string) []any {
	t.Helper()
	var stack [][]any
	var top []any
	push := func(x any) {
		if len(stack) == 0 {
			top = append(top, x)
			return
		}
		stack[len(stack)-1] = append(stack[len(stack)-1], x)
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				t.Fatalf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(l)
			i++
		case c == '#' && i+1 < len(src) && src[i+1] == '"':
			end := strings.IndexByte(src[i+2:], '"')
			push(raw(src[i+2 : i+2+end]))
			i += end + 3
		case c == '"':
			end := strings.IndexByte(src[i+1:], '"')
			push(str(src[i+1 : i+1+end]))
			i += end + 2
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()", rune(src[j])) {
				j++
			}
			push(sym(src[i:j]))
			i = j
		}
	}
	if len(stack) != 0 {
		t.Fatal("unbalanced (")
	}
	return top
}

// spellings are the names a case-insensitive APFS volume takes for name:
// upper case, mixed case, and the Unicode spellings of its letters (the
// Kelvin sign for k, long s for s, the ligatures for fi, ss, st, ff, fl).
func spellings(name string) []string {
	out := []string{strings.ToUpper(name), mixCase(name), strings.ToUpper(mixCase(name[:len(name)/2])) + name[len(name)/2:]}
	for _, sub := range [][2]string{{"k", "\u212A"}, {"s", "\u017F"}, {"fi", "\uFB01"}, {"ss", "\u00DF"}, {"st", "\uFB06"}, {"ff", "\uFB00"}, {"fl", "\uFB02"}, {"ss", "\u1E9E"}} {
		if strings.Contains(name, sub[0]) {
			out = append(out, strings.ReplaceAll(name, sub[0], sub[1]))
		}
	}
	return out
}

func TestSBPLParserReadsTheProfile(t *testing.T) {
	// The evaluator itself: a later rule wins, require-not inverts, params
	// fill in, a raw string keeps its backslash.
	s := parseSBPL(t, `(version 1)
(deny default)
(allow file-write* (require-all (subpath (param "R")) (require-not (literal "/r/x"))))
(deny file-write* (regex #"^/r/a\.b$"))`, []string{"-DR=/r"})
	for path, want := range map[string]bool{"/r/y": true, "/r": true, "/r/x": false, "/r/a.b": false, "/r/axb": true, "/rx": false, "/other": false} {
		if got := s.allowed("file-write*", path); got != want {
			t.Errorf("%s: allowed %v, want %v", path, got, want)
		}
	}
	if fmt.Sprint(s.rules[len(s.rules)-1].filters) != `[[regex ^/r/a\.b$]]` {
		t.Errorf("raw string read as %v", s.rules[len(s.rules)-1].filters)
	}
}
