package patch

import (
	"fmt"
	"sort"
	"strings"
)

// Edit is one hunk's effect on a file: the byte range [Start, End) of the old
// content and what replaces it. Edits of a file are sorted and never overlap,
// so any subset of them can be applied on its own (an editor may accept only
// some hunks).
type Edit struct {
	Hunk       int // index in FileChange.Hunks
	Start, End int // byte offsets in the old content
	Text       string
	// FirstLine is the 0-based line of the old content where the edit starts.
	FirstLine int
}

// HunkError says which chunk of which file could not be applied, and why.
type HunkError struct {
	Path      string
	Hunk      int // 1-based chunk number within the file
	PatchLine int
	Msg       string
}

func (e *HunkError) Error() string {
	if e.PatchLine > 0 {
		return fmt.Sprintf("%s: chunk %d (patch line %d): %s", e.Path, e.Hunk, e.PatchLine, e.Msg)
	}
	return fmt.Sprintf("%s: chunk %d: %s", e.Path, e.Hunk, e.Msg)
}

// content is a file split into lines for matching, with the byte offset of
// every line so edits can be expressed as byte ranges.
type content struct {
	raw      string
	starts   []int // starts[i] is line i's offset; starts[n] == len(raw)
	t        text
	eol      string // the file's usual line terminator, used for new lines
	finalEOL bool   // the last line ends with a terminator (or the file is empty)
	realLen  int    // length of the real text (raw has a virtual final terminator when !finalEOL)
}

// splitContent splits a file for matching. With loneCR (Codex patches), a
// lone "\r" ends a line as "\n" and "\r\n" do, as in Codex; a unified diff
// keeps git's view, where it is part of the line.
func splitContent(raw string, loneCR bool) *content {
	c := &content{raw: raw, finalEOL: true, eol: "\n"}
	n := strings.Count(raw, "\n") + strings.Count(raw, "\r") // an upper bound
	c.starts = make([]int, 0, n+2)
	c.t.lines = make([]string, 0, n+1)
	ends := "\n"
	if loneCR {
		ends = "\r\n"
	}
	crlf, cr := 0, 0
	for off := 0; off < len(raw); {
		c.starts = append(c.starts, off)
		i := strings.IndexAny(raw[off:], ends)
		if i < 0 {
			c.t.lines = append(c.t.lines, raw[off:])
			c.finalEOL = false
			off = len(raw)
			break
		}
		c.t.lines = append(c.t.lines, raw[off:off+i])
		switch {
		case raw[off+i] == '\n' && i > 0 && raw[off+i-1] == '\r' && !loneCR:
			// CRLF found from the "\n" (a unified diff's file).
			c.t.lines[len(c.t.lines)-1] = raw[off : off+i-1]
			crlf++
			off += i + 1
		case raw[off+i] == '\n':
			off += i + 1
		case off+i+1 < len(raw) && raw[off+i+1] == '\n':
			crlf++
			off += i + 2
		default:
			cr++
			off += i + 1
		}
	}
	lf := len(c.t.lines) - crlf - cr
	switch {
	case cr > crlf && cr >= lf:
		c.eol = "\r"
	case crlf > 0 && crlf >= lf:
		c.eol = "\r\n"
	}
	c.realLen = len(raw)
	if !c.finalEOL {
		// Work as if the last line had a terminator, so every line is alike;
		// applyHunks maps the edits back onto the real text.
		c.raw += c.eol
	}
	c.starts = append(c.starts, len(c.raw))
	return c
}

func (c *content) n() int { return len(c.t.lines) }

// applyHunks locates every hunk in old and returns the new content and the
// per-hunk edits. Hunks are found in order, each after the previous one.
func applyHunks(path, old string, hunks []Hunk) (string, []Edit, error) {
	loneCR := true
	for _, h := range hunks {
		loneCR = loneCR && !h.NoEOLKnown // set on every unified hunk
	}
	c := splitContent(old, loneCR)
	edits := make([]Edit, 0, len(hunks))
	from := 0
	for hi := range hunks {
		h := &hunks[hi]
		fail := func(format string, a ...any) error {
			return &HunkError{Path: path, Hunk: hi + 1, PatchLine: h.Line, Msg: fmt.Sprintf(format, a...)}
		}
		ops := h.Lines
		at, err := locate(c, h, ops, from, fail)
		if err != nil {
			// Codex's leniency: a trailing blank context line the file does
			// not have is usually the model's separator, not content.
			trimmedOps := ops
			for len(trimmedOps) > 0 && trimmedOps[len(trimmedOps)-1] == (Line{Context, ""}) {
				trimmedOps = trimmedOps[:len(trimmedOps)-1]
			}
			if len(trimmedOps) == len(ops) || !hasChange(trimmedOps) {
				return "", nil, err
			}
			retryAt, retryErr := locate(c, h, trimmedOps, from, fail)
			if retryErr != nil {
				return "", nil, err // the error about the lines as written
			}
			at, ops = retryAt, trimmedOps
		}
		e := c.edit(ops, at)
		e.Hunk = hi
		edits = append(edits, e)
		if countOld(ops) == 0 && at == c.n() {
			// An addition appended at the end of the file does not move
			// the search for the next chunk there (Codex sorts its
			// replacements by position).
			continue
		}
		from = at + countOld(ops)
	}
	// In file order; appends at the end stay in patch order.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	c.toReal(hunks, edits)
	return splice(old, edits), edits, nil
}

// toReal maps edits made against the text with a virtual final terminator
// back onto the real text, and decides whether the result ends with one:
// as the file did (Codex keeps it; a unified diff says so with "\ No newline
// at end of file").
func (c *content) toReal(hunks []Hunk, edits []Edit) {
	v := len(c.raw)
	wantFinal, last := c.finalEOL, -1
	for i, e := range edits {
		if e.End == v {
			last = i
			if h := hunks[e.Hunk]; h.NoEOLKnown {
				wantFinal = !h.NewNoEOL
			}
		}
	}
	if last < 0 {
		return
	}
	materialised := c.finalEOL
	for i := range edits {
		e := &edits[i]
		if !c.finalEOL && e.End == v {
			if e.Start == v {
				// An insertion after the last line: it must first end that line.
				if !materialised {
					e.Text = c.eol + e.Text
				}
				e.Start = c.realLen
			}
			materialised = true
			e.End = c.realLen
		}
		if i == last && !wantFinal {
			if t, ok := strings.CutSuffix(e.Text, "\n"); ok {
				e.Text = strings.TrimSuffix(t, "\r")
			}
		}
	}
}

func countOld(ops []Line) int {
	n := 0
	for _, l := range ops {
		if l.Op != Insert {
			n++
		}
	}
	return n
}

func oldOf(ops []Line) []string {
	out := make([]string, 0, len(ops))
	for _, l := range ops {
		if l.Op != Insert {
			out = append(out, l.Text)
		}
	}
	return out
}

// locate finds the line where the hunk's old lines start, searching from
// line from onwards. It refuses an ambiguous location.
func locate(c *content, h *Hunk, ops []Line, from int, fail func(string, ...any) error) (int, error) {
	old := oldOf(ops)
	n := c.n()
	switch {
	case h.EndOfFile:
		at := n - len(old)
		if at >= from {
			for l := exact; l < levels; l++ {
				if c.t.matchesAt(l, old, at) {
					return at, nil
				}
			}
		}
		return 0, notFound(c, old, from, fail, "at the end of the file (the chunk is marked *** End of File)")
	case len(h.Anchors) > 0:
		starts, err := anchorChain(c, h.Anchors, from, fail)
		if err != nil {
			return 0, err
		}
		if len(old) == 0 {
			// A pure addition under an anchor goes right after it.
			return unique(starts, fail, "the @@ anchor")
		}
		var found []int
		for _, s := range starts {
			if m, _ := c.t.find(old, s, n, 1); len(m) > 0 {
				found = appendNew(found, m[0])
			}
		}
		if len(found) == 0 {
			return 0, notFound(c, old, starts[0], fail, fmt.Sprintf("after the @@ anchor %q", h.Anchors[len(h.Anchors)-1]))
		}
		return unique(found, fail, "these lines")
	case len(old) == 0:
		if h.OldStart > 0 {
			return clamp(h.OldStart-1, from, n), nil
		}
		return n, nil // Codex: a pure addition with no anchor appends
	case h.OldStart > 0:
		hint := h.OldStart - 1
		if hint >= from && c.t.matchesAt(exact, old, hint) {
			return hint, nil
		}
		found, _ := c.t.find(old, from, n, 0)
		if len(found) == 0 {
			return 0, notFound(c, old, from, fail, fmt.Sprintf("near line %d", h.OldStart))
		}
		best, tie := found[0], false
		for _, f := range found[1:] {
			switch d, bd := abs(f-hint), abs(best-hint); {
			case d < bd:
				best, tie = f, false
			case d == bd:
				tie = true
			}
		}
		if tie {
			return 0, fail("these lines match equally well at lines %s, on either side of line %d where the diff puts them; add context to tell them apart", lineList(found), h.OldStart)
		}
		return best, nil
	default:
		found, _ := c.t.find(old, from, n, 2)
		if len(found) == 0 {
			return 0, notFound(c, old, from, fail, "")
		}
		return unique(found, fail, "these lines")
	}
}

// anchorChain finds where the hunk may start after its @@ anchors: every
// occurrence of the first anchor, then for each the next occurrence of each
// following anchor. It returns the lines just after the last anchor.
func anchorChain(c *content, anchors []string, from int, fail func(string, ...any) error) ([]int, error) {
	n := c.n()
	occ, _ := c.t.find(anchors[:1], from, n, 0)
	if len(occ) == 0 {
		return nil, fail("could not find the @@ context line %q%s", anchors[0], fromText(from))
	}
	starts := make([]int, 0, len(occ))
	for _, o := range occ {
		starts = append(starts, o+1)
	}
	for _, a := range anchors[1:] {
		var next []int
		for _, s := range starts {
			if m, _ := c.t.find([]string{a}, s, n, 1); len(m) > 0 {
				next = appendNew(next, m[0]+1)
			}
		}
		if len(next) == 0 {
			return nil, fail("could not find the @@ context line %q after %q", a, anchors[0])
		}
		starts = next
	}
	return starts, nil
}

func unique(found []int, fail func(string, ...any) error, what string) (int, error) {
	if len(found) > 1 {
		return 0, fail("%s match equally well at lines %s; add context lines or an @@ anchor so the chunk matches one place", what, lineList(found))
	}
	return found[0], nil
}

func notFound(c *content, old []string, from int, fail func(string, ...any) error, where string) error {
	var b strings.Builder
	b.WriteString("could not find these lines")
	if where != "" {
		b.WriteString(" " + where)
	} else {
		b.WriteString(fromText(from))
	}
	b.WriteString(":")
	for i, l := range old {
		if i == 20 {
			fmt.Fprintf(&b, "\n    … (%d more)", len(old)-20)
			break
		}
		b.WriteString("\n    " + l)
	}
	if at, k := c.t.closest(old, from); k > 0 && k < len(old) && at+k < c.n() {
		fmt.Fprintf(&b, "\nClosest: %d of them match from line %d, but line %d is %q where the patch expects %q.", k, at+1, at+k+1, clip(c.t.lines[at+k]), clip(old[k]))
	}
	return fail("%s", b.String())
}

func fromText(from int) string {
	if from > 0 {
		return fmt.Sprintf(" (searching from line %d, after the previous chunk)", from+1)
	}
	return ""
}

// edit builds the replacement for a hunk whose old lines start at line at.
// Context lines keep the file's own text and terminators (they may have
// matched only loosely); added lines take the file's usual terminator.
func (c *content) edit(ops []Line, at int) Edit {
	var b strings.Builder
	size := 0
	for _, l := range ops {
		size += len(l.Text) + len(c.eol)
	}
	b.Grow(size)
	i := at
	for _, l := range ops {
		switch l.Op {
		case Context:
			b.WriteString(c.raw[c.starts[i]:c.starts[i+1]])
			i++
		case Remove:
			i++
		case Insert:
			b.WriteString(l.Text)
			b.WriteString(c.eol)
		}
	}
	return Edit{Start: c.starts[at], End: c.starts[i], Text: b.String(), FirstLine: at}
}

// splice applies sorted, non-overlapping edits to old.
func splice(old string, edits []Edit) string {
	size := len(old)
	for _, e := range edits {
		size += len(e.Text) - (e.End - e.Start)
	}
	var b strings.Builder
	b.Grow(size)
	prev := 0
	for _, e := range edits {
		b.WriteString(old[prev:e.Start])
		b.WriteString(e.Text)
		prev = e.End
	}
	b.WriteString(old[prev:])
	return b.String()
}

func appendNew(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func lineList(lines []int) string {
	parts := make([]string, 0, len(lines))
	for i, l := range lines {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(lines)-5))
			break
		}
		parts = append(parts, fmt.Sprint(l+1))
	}
	return strings.Join(parts, ", ")
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
