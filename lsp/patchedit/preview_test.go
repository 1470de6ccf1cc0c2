package patchedit

import (
	"testing"

	"github.com/wardenhq/warden/agent/patch"
)

// TestChangedPartLeavesTheContextOut: an edit sent to the editor covers
// only the lines it changes, without the hunk's context or a line break
// both sides share, so a Refactor Preview row reads "line 2 → line two"
// rather than "line 1⏎line 2⏎line 3⏎"; applied, it gives the same text.
func TestChangedPartLeavesTheContextOut(t *testing.T) {
	before := "line 1\nline 2\nline 3\nline 4\n"
	for _, tc := range []struct {
		name             string
		start, end       int
		text             string
		wantOld, wantNew string
	}{
		{"replace", 0, 21, "line 1\nline two\nline 3\n", "line 2", "line two"},
		{"insert", 0, 14, "line 1\nline 1.5\nline 2\n", "", "line 1.5\n"},
		{"delete", 0, 21, "line 1\nline 3\n", "line 2\n", ""},
		{"no context", 7, 14, "line II\n", "line 2", "line II"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := patch.Edit{Start: tc.start, End: tc.end, Text: tc.text}
			start, end, text := changedPart(before, e)
			if before[start:end] != tc.wantOld || text != tc.wantNew {
				t.Errorf("replaces %q with %q, want %q with %q", before[start:end], text, tc.wantOld, tc.wantNew)
			}
			if got, want := before[:start]+text+before[end:], before[:e.Start]+e.Text+before[e.End:]; got != want {
				t.Errorf("the narrowed edit gives %q, the hunk %q", got, want)
			}
		})
	}
	crlf := "a\r\nb\r\nc\r\n"
	start, end, text := changedPart(crlf, patch.Edit{Start: 0, End: len(crlf), Text: "a\r\nB\r\nc\r\n"})
	if crlf[start:end] != "b" || text != "B" {
		t.Errorf("CRLF: replaces %q with %q", crlf[start:end], text)
	}
}
