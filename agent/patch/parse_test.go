package patch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseErrorsNameThePlace(t *testing.T) {
	cases := map[string]struct{ patch, want string }{
		"truncated unified": {"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n", "patch line"},
		"chunk without @@":  {"*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\nnot a line\n*** End Patch", `patch line 6: x: expected an @@ line to start chunk 2, got "not a line"`},
		"first bad line":    {"*** Begin Patch\n*** Update File: x\n@@\n?a\n*** End Patch", `patch line 4: x: unexpected line "?a" in chunk 1`},
		"no change":         {"*** Begin Patch\n*** Update File: x\n@@\n a\n*** End Patch", "patch line 3: x: chunk 1 changes nothing"},
		"empty update":      {"*** Begin Patch\n*** Update File: x\n*** End Patch", "patch line 2: Update File x has no changes"},
		"no path":           {"*** Begin Patch\n*** Add File:\n+x\n*** End Patch", "patch line 2"},
		"NUL":               {"*** Begin Patch\n*** Add File: x\n+a\x00\n*** End Patch", "patch line 3: NUL byte"},
		"binary git":        {"diff --git a/x b/x\nindex 1..2 100644\nGIT binary patch\nliteral 1\nIcmZ?l0000R0RR91\n\nliteral 0\nHcmV?d00001\n\n", "binary"},
		"not a patch":       {"just some text\n", "not a patch"},
	}
	for name, c := range cases {
		_, err := Parse(c.patch)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", name, err, c.want)
		}
	}
	if _, err := Parse(" \n\t\n"); !errors.Is(err, ErrEmpty) {
		t.Errorf("blank patch: %v", err)
	}
	if _, err := Parse(strings.Repeat("x", MaxPatchBytes+1)); err == nil || !strings.Contains(err.Error(), "MiB limit") {
		t.Errorf("oversized patch: %v", err)
	}
}

func TestCodexLeniency(t *testing.T) {
	// A unified-style range after @@, a first chunk without @@, a blank
	// separator line inside the envelope, and CRLF patch lines.
	text := "*** Begin Patch\r\n*** Update File: f\r\n-a\r\n+b\r\n@@ -10,2 +10,2 @@ func g()\r\n-c\r\n+d\r\n\r\n*** End Patch\r\n"
	changes, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	h := changes[0].Hunks
	if len(h) != 2 || len(h[1].Anchors) != 1 || h[1].Anchors[0] != "func g()" || h[0].Lines[0] != (Line{Remove, "a"}) {
		t.Fatalf("hunks = %+v", h)
	}
	got, _, err := applyHunks("f", "a\nfunc g()\nc\n", h)
	if err != nil || got != "b\nfunc g()\nd\n" {
		t.Errorf("apply = %q, %v", got, err)
	}
}

func TestLadderPrefersTheStrictestMatch(t *testing.T) {
	// "x = 1" matches exactly once and loosely once: the exact one wins
	// rather than counting as ambiguous.
	old := "  x = 1\nx = 1\n"
	got, _, err := applyHunks("f", old, []Hunk{{Lines: []Line{{Remove, "x = 1"}, {Insert, "x = 2"}}}})
	if err != nil || got != "  x = 1\nx = 2\n" {
		t.Errorf("got %q, %v", got, err)
	}
	// Typographic punctuation in the file, ASCII in the patch.
	got, _, err = applyHunks("f", "say “hi” – now\n", []Hunk{{Lines: []Line{{Remove, `say "hi" - now`}, {Insert, "ok"}}}})
	if err != nil || got != "ok\n" {
		t.Errorf("punctuation: got %q, %v", got, err)
	}
}

func TestUnifiedHintBreaksTies(t *testing.T) {
	old := "x\nret\nx\nx\nx\nx\nret\n"
	h := Hunk{OldStart: 6, NoEOLKnown: true, Lines: []Line{{Remove, "ret"}, {Insert, "RET"}}}
	got, _, err := applyHunks("f", old, []Hunk{h})
	if err != nil || got != "x\nret\nx\nx\nx\nx\nRET\n" {
		t.Errorf("got %q, %v", got, err)
	}
	h.OldStart = 5 // equally far from lines 2 and 7... 3 and 2 lines away: nearest wins
	if _, _, err := applyHunks("f", old, []Hunk{h}); err != nil {
		t.Errorf("nearest: %v", err)
	}
	h.OldStart = 0 // no hint: ambiguous
	if _, _, err := applyHunks("f", old, []Hunk{h}); err == nil || !strings.Contains(err.Error(), "lines 2, 7") {
		t.Errorf("no hint: %v", err)
	}
}

func FuzzParseCodex(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/scenarios/*/patch")
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(string(data), "a\nb\nc\n")
	}
	f.Add("*** Begin Patch\n*** Update File: x\n@@ a\n@@ b\n c\n-d\n+e\n*** End of File\n*** End Patch", "a\nb\nc\nd\n")
	f.Fuzz(func(t *testing.T, text, content string) {
		changes, err := Parse(text)
		if err != nil {
			return
		}
		for _, c := range changes {
			if c.Path == "" || c.Kind < Add || c.Kind > Update {
				t.Fatalf("bad change %+v", c)
			}
			if c.Kind == Update {
				checkApply(t, content, c.Hunks)
			}
		}
	})
}

func FuzzParseUnified(f *testing.F) {
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "a\nb\n")
	f.Add("diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n", "")
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n", "a")
	if data, err := os.ReadFile("testdata/scenarios/unified_git_diff/patch"); err == nil {
		f.Add(string(data), "a\nb\nc\nd\ne\nf\ng\nh\n")
	}
	f.Fuzz(func(t *testing.T, text, content string) {
		changes, err := Parse(text)
		if err != nil {
			return
		}
		for _, c := range changes {
			if c.Path == "" {
				t.Fatalf("change without a path: %+v", c)
			}
			checkApply(t, content, c.Hunks)
		}
	})
}

// checkApply applies hunks and checks the edits describe the result exactly.
func checkApply(t *testing.T, content string, hunks []Hunk) {
	after, edits, err := applyHunks("f", content, hunks)
	if err != nil {
		return
	}
	prev := 0
	for _, e := range edits {
		if e.Start < prev || e.End < e.Start || e.End > len(content) {
			t.Fatalf("edits overlap or leave the file: %+v", edits)
		}
		prev = e.End
	}
	if splice(content, edits) != after {
		t.Fatal("edits do not produce the result")
	}
}

func TestLandedHunks(t *testing.T) {
	before := "a\nb\nc\nd\ne\n"
	hunks := []Hunk{
		{Lines: []Line{{Remove, "b"}, {Insert, "B"}}},
		{Lines: []Line{{Context, "c"}, {Insert, "c2"}}},
		{Lines: []Line{{Remove, "e"}}},
	}
	after, edits, err := applyHunks("f", before, hunks)
	if err != nil {
		t.Fatal(err)
	}
	for _, subset := range [][]int{{}, {0}, {1}, {2}, {0, 2}, {0, 1, 2}} {
		var picked []Edit
		for _, i := range subset {
			picked = append(picked, edits[i])
		}
		cur := splice(before, picked)
		got, ok := LandedHunks(before, cur, edits)
		if !ok || fmt.Sprint(got) != fmt.Sprint(subset) && !(len(got) == 0 && len(subset) == 0) {
			t.Errorf("subset %v: LandedHunks = %v, %v", subset, got, ok)
		}
	}
	if got, ok := LandedHunks(before, after, edits); !ok || len(got) != 3 {
		t.Errorf("all: %v %v", got, ok)
	}
	if _, ok := LandedHunks(before, "something else\n", edits); ok {
		t.Error("unrelated text matched")
	}
}

func TestHeredocForms(t *testing.T) {
	body := "*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n"
	for _, first := range []string{"<<EOF", "<<'EOF'", `<<"EOF"`, "apply_patch <<'EOF'", "applypatch <<EOF"} {
		changes, err := Parse(first + "\n" + body + "EOF\n")
		if err != nil || len(changes) != 1 || changes[0].Content != "x\n" {
			t.Errorf("%s: %v %+v", first, err, changes)
		}
	}
}

func TestConflictingChangesAreRefused(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	for _, text := range []string{
		"*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** Add File: b.txt\n+b\n*** End Patch",
		"*** Begin Patch\n*** Delete File: a.txt\n*** Update File: ./a.txt\n@@\n-a\n+b\n*** End Patch",
		"*** Begin Patch\n*** Add File: n.txt\n+1\n*** Add File: sub/../n.txt\n+2\n*** End Patch",
	} {
		changes, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Prepare(changes, Disk{}, Options{Root: root}); err == nil || !strings.Contains(err.Error(), "is changed twice in this patch") {
			t.Errorf("%q: err = %v", text, err)
		}
	}
}

// A big git diff is parsed in parts at once; the result, and the line an
// error names, are the same as parsing it whole.
func TestBigGitDiffParsedInParts(t *testing.T) {
	text := makeBenchTree(300, 160, 20).patch
	if parts := splitGitDiff(text, 1, 4); len(parts) < 2 {
		t.Fatalf("a %d-byte diff was not split", len(text))
	}
	whole, err := parseUnifiedPart(text, 1)
	if err != nil {
		t.Fatal(err)
	}
	split, err := parseUnified(text, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(whole, split) {
		t.Fatal("split parse differs from the whole parse")
	}
	// Break the last hunk's count: both name the same patch line.
	i := strings.LastIndex(text, "@@ -")
	bad := text[:i] + strings.Replace(text[i:], ",8 +", ",9 +", 1)
	_, errWhole := parseUnifiedPart(bad, 1)
	_, errSplit := parseUnified(bad, 1)
	if errWhole == nil || errSplit == nil || errWhole.Error() != errSplit.Error() {
		t.Fatalf("errors differ:\n whole %v\n split %v", errWhole, errSplit)
	}
}
