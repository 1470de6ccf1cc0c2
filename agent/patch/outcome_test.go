package patch

import (
	"strings"
	"testing"
)

// TestOutcomeSaysTheVerdictFirst: the one-line outcome a notification shows
// starts with what became of the change, so a toast that cuts its tail
// still says it; each file and reason follows.
func TestOutcomeSaysTheVerdictFirst(t *testing.T) {
	for _, tc := range []struct {
		files []FileResult
		want  string
	}{
		{[]FileResult{{Path: "a.txt", Status: Landed}, {Path: "b.txt", Status: Landed}}, "patch applied: a.txt, b.txt"},
		{[]FileResult{{Path: "a.txt", Reason: "the user rejected it"}}, "patch not applied: a.txt (the user rejected it)"},
		{[]FileResult{{Path: "a.txt", Status: Partial, Hunks: []int{0}, Total: 2}, {Path: "b.txt", Reason: "stale"}},
			"patch applied only in part: a.txt (only chunks 1 of 2 applied); not applied: b.txt (stale)"},
	} {
		r := &Result{Files: tc.files}
		if got := r.Outcome("patch"); got != tc.want {
			t.Errorf("Outcome = %q, want %q", got, tc.want)
		}
		if got := r.Outcome("patch"); strings.Contains(got, "\n") {
			t.Errorf("Outcome is not one line: %q", got)
		}
	}
}
