package command

import (
	"reflect"
	"strings"
	"testing"
)

func TestAnalyzeSplitsScripts(t *testing.T) {
	cases := []struct {
		script   string
		commands [][]string
		problem  string // a substring of the first problem, "" for none
	}{
		{"ls && pwd", [][]string{{"ls"}, {"pwd"}}, ""},
		{"a || b; c | d", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}, ""},
		{"(cd src && make)", [][]string{{"cd", "src"}, {"make"}}, ""},
		{"echo $(date) `whoami`", [][]string{{"echo", "$(date)", "$(whoami)"}, {"date"}, {"whoami"}}, ""},
		{"diff <(ls a) <(ls b)", [][]string{{"diff", "<(ls a)", "<(ls b)"}, {"ls", "a"}, {"ls", "b"}}, ""},
		{"if test -f x; then cat x; fi", [][]string{{"test", "-f", "x"}, {"cat", "x"}}, ""},
		{"while read l; do echo \"$l\"; done < f", [][]string{{"read", "l"}, {"echo", "\"$l\""}}, ""},
		{"echo 'a b' \"c d\" e\\ f", [][]string{{"echo", "a b", "c d", "e f"}}, ""},
		{"git commit -m \"fix: it\"", [][]string{{"git", "commit", "-m", "fix: it"}}, ""},
		{"bash -c 'ls; pwd'", [][]string{{"ls"}, {"pwd"}}, ""},
		{"ls &", [][]string{{"ls"}}, "background"},
		{"$X y", [][]string{{"$X", "y"}}, "computed at run time"},
		{"f() { :; }", nil, "function"},
		{"ls && (", nil, "cannot parse"},
		{"export A=1", nil, "declares"},
		{"A=1", nil, "assigns"},
	}
	for _, c := range cases {
		a := Analyze([]string{"bash", "-lc", c.script})
		var got [][]string
		for _, s := range a.Segments {
			got = append(got, s.Argv)
		}
		if c.commands != nil && !reflect.DeepEqual(got, c.commands) {
			t.Errorf("%q: commands %q, want %q", c.script, got, c.commands)
		}
		switch {
		case c.problem == "" && len(a.Problems) > 0:
			t.Errorf("%q: unexpected problems %q", c.script, a.Problems)
		case c.problem != "" && (len(a.Problems) == 0 || !strings.Contains(a.Problems[0], c.problem)):
			t.Errorf("%q: problems %q, want one containing %q", c.script, a.Problems, c.problem)
		}
	}
}

func TestUnwrap(t *testing.T) {
	cases := []struct {
		argv, inner, wrappers []string
	}{
		{[]string{"sudo", "rm", "x"}, []string{"rm", "x"}, []string{"sudo"}},
		{[]string{"sudo", "-u", "bob", "ls"}, []string{"ls"}, []string{"sudo"}},
		{[]string{"env", "-i", "A=1", "B=2", "make"}, []string{"make"}, []string{"env"}},
		{[]string{"nice", "-n", "10", "timeout", "5s", "make", "all"}, []string{"make", "all"}, []string{"nice", "timeout"}},
		{[]string{"ls"}, []string{"ls"}, nil},
	}
	for _, c := range cases {
		inner, w := Unwrap(c.argv)
		if !reflect.DeepEqual(inner, c.inner) || !reflect.DeepEqual(w, c.wrappers) {
			t.Errorf("Unwrap(%q) = %q, %q; want %q, %q", c.argv, inner, w, c.inner, c.wrappers)
		}
	}
}
