package textdoc

import (
	"context"
	"os"
	"testing"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

func pos(l, c uint32) protocol.Position { return protocol.Position{Line: l, Character: c} }

func TestOffsetOfCountsUTF16Units(t *testing.T) {
	text := "a😀b\r\nçé\rlast\n"
	starts := LineStarts(text)
	if len(starts) != 4 {
		t.Fatalf("lines = %v, want 4 (\\r\\n, \\r and \\n each end a line)", starts)
	}
	for _, tc := range []struct {
		p    protocol.Position
		want int
	}{
		{pos(0, 0), 0},
		{pos(0, 1), 1},
		{pos(0, 3), 5}, // after the emoji: 2 UTF-16 units, 4 bytes
		{pos(0, 2), 1}, // inside the surrogate pair: before the emoji
		{pos(0, 4), 6},
		{pos(0, 5), 6}, // past the end of the line: its end, before \r\n
		{pos(1, 1), 10},
		{pos(2, 4), 17},
		{pos(3, 0), len(text)},
	} {
		got, err := offsetOf(text, starts, tc.p)
		if err != nil || got != tc.want {
			t.Errorf("offsetOf(%v) = %d, %v; want %d", tc.p, got, err, tc.want)
		}
	}
	if got, err := offsetOf(text, starts, pos(4, 0)); err != nil || got != len(text) {
		t.Errorf("the start of the line after the last = %d, %v; want the end of the text", got, err)
	}
	for _, p := range []protocol.Position{pos(4, 1), pos(5, 0)} {
		if _, err := offsetOf(text, starts, p); err == nil {
			t.Errorf("%v is past the end and must be an error", p)
		}
	}
}

func TestApplyIsAllOrNothing(t *testing.T) {
	d := NewDocument("file:///a", "go", 1, "one\ntwo\n")
	r := func(l1, c1, l2, c2 uint32) *protocol.Range {
		return &protocol.Range{Start: pos(l1, c1), End: pos(l2, c2)}
	}
	_, err := d.apply(2, []ContentChange{{Range: r(0, 0, 0, 3), Text: "ONE"}, {Range: r(9, 0, 9, 0), Text: "x"}})
	if err == nil {
		t.Fatal("want an error for line 9")
	}
	if d.Text != "one\ntwo\n" || d.Version != 1 {
		t.Errorf("the snapshot changed: %q v%d", d.Text, d.Version)
	}
	if _, err := d.apply(2, []ContentChange{{Range: r(1, 2, 0, 1), Text: ""}}); err == nil {
		t.Error("an end before the start must be an error")
	}
	next, err := d.apply(2, []ContentChange{{Range: r(1, 0, 1, 3), Text: "2"}, {Range: r(0, 3, 1, 0), Text: " "}})
	if err != nil || next.Text != "one 2\n" || next.Version != 2 {
		t.Errorf("apply = %q %v", next.Text, err)
	}
}

func TestReadFilePrefersTheBuffer(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f.txt"
	writeFile(t, path, "on disk")
	s := NewStore()
	got, v, open, err := s.ReadFile(path)
	if err != nil || open || v != 0 || string(got) != "on disk" {
		t.Fatalf("closed file: %q v%d open=%v %v", got, v, open, err)
	}
	s.Open(NewDocument(PathToURI(path), "text", 4, "in the editor"))
	got, v, open, err = s.ReadFile(path)
	if err != nil || !open || v != 4 || string(got) != "in the editor" {
		t.Fatalf("open file: %q v%d open=%v %v", got, v, open, err)
	}
	if _, _, _, err := s.ReadFile("relative.txt"); err == nil {
		t.Error("a relative path must be refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int32)
	go func() {
		v, _ := s.WaitVersion(ctx, PathToURI(path), 6)
		done <- v
	}()
	s.Change(PathToURI(path), 5, []ContentChange{{Text: "five"}})
	s.Change(PathToURI(path), 6, []ContentChange{{Text: "six"}})
	if v := <-done; v != 6 {
		t.Errorf("WaitVersion returned %d", v)
	}
	cancel()
	if _, err := s.WaitVersion(ctx, PathToURI(path), 9); err == nil {
		t.Error("WaitVersion must end with its ctx")
	}
}

// FuzzPositionRoundTrip checks offset → position → offset on any text.
func FuzzPositionRoundTrip(f *testing.F) {
	f.Add("a😀b\r\nçé\rlast\n", 3)
	f.Add("\r\n\r\n", 1)
	f.Fuzz(func(t *testing.T, text string, off int) {
		if len(text) == 0 {
			return
		}
		off = ((off % (len(text) + 1)) + len(text) + 1) % (len(text) + 1)
		starts := LineStarts(text)
		if off < len(text) && !utf8.RuneStart(text[off]) {
			return
		}
		if off > 0 && off < len(text) && text[off-1] == '\r' && text[off] == '\n' {
			return // inside a line break: no position names it
		}
		p := PositionAt(text, starts, off)
		back, err := offsetOf(text, starts, p)
		if err != nil {
			t.Fatalf("offsetOf(%v): %v", p, err)
		}
		if back != off && !lineBreakAt(text, off) {
			t.Fatalf("offset %d → %v → %d in %q", off, p, back, text)
		}
	})
}

// lineBreakAt: positions inside the break itself map to the line's end.
func lineBreakAt(text string, off int) bool {
	return off < len(text) && (text[off] == '\n' || text[off] == '\r') && off > 0
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLineStripsEachKindOfLineBreak(t *testing.T) {
	d := NewDocument("file:///a", "go", 1, "one\r\ntwo\rthree\nfour")
	for i, want := range []string{"one", "two", "three", "four", ""} {
		if got := d.Line(i); got != want {
			t.Errorf("Line(%d) = %q, want %q", i, got, want)
		}
	}
	if d.LineCount() != 4 || d.Line(-1) != "" {
		t.Errorf("LineCount = %d", d.LineCount())
	}
}
