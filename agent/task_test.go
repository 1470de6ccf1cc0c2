package agent

import (
	"strings"
	"testing"
)

func TestCommentInstruction(t *testing.T) {
	for line, want := range map[string]string{
		"\t// warden: handle the error here":      "handle the error here",
		"x = 1  # warden: use a constant":         "use a constant",
		"-- warden: add an index":                 "add an index",
		"/* warden: split this function */":       "split this function",
		"<!-- warden: translate to French -->":    "translate to French",
		"   * warden: document the fields":        "document the fields",
		`fmt.Println("warden: not a comment")`:    "",
		"// warden:":                              "",
		"// a comment that mentions warden later": "",
	} {
		got, ok := CommentInstruction(line)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q, %v; want %q", line, got, ok, want)
		}
	}
}

func TestTaskPrompt(t *testing.T) {
	p := Task{Instruction: FixInstruction, File: "/w/main.go", StartLine: 3, EndLine: 4,
		Selection: "x := 1\n", Diagnostics: []string{"line 3: x declared and not used (compiler)"}}.Prompt()
	for _, want := range []string{FixInstruction, "File: /w/main.go (lines 3-4)", "- line 3: x declared and not used (compiler)", "```\nx := 1\n```"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
