package patch

import (
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

// The Codex apply_patch envelope. Markers are compared with surrounding
// whitespace trimmed, as Codex does, so padded markers still parse.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addPrefix    = "*** Add File: "
	deletePrefix = "*** Delete File: "
	updatePrefix = "*** Update File: "
	movePrefix   = "*** Move to: "
	eofMarker    = "*** End of File"
	// envPrefix is a preamble line some Codex front ends put before the
	// first file: it names where the patch applies, and Warden ignores it
	// (the workspace is fixed by the session, never by the patch).
	envPrefix = "*** Environment ID:"
)

// unifiedRange matches a unified hunk header models sometimes put after "@@"
// in a Codex patch ("@@ -12,5 +12,6 @@ func f"); its line numbers are not an
// anchor, so it reads as a bare "@@" plus the trailing context, if any.
var unifiedRange = lazyre.New(`^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?`)

// codexParser walks the lines between the Begin and End markers.
type codexParser struct {
	lines []string
	first int // patch line number of lines[0]
	i     int
}

func (p *codexParser) lineNo() int { return p.first + p.i }

func (p *codexParser) more() bool { return p.i < len(p.lines) }

func (p *codexParser) trimmed() string { return strings.TrimSpace(p.lines[p.i]) }

// isMarker reports whether a (trimmed) line is one of the envelope's markers
// rather than hunk content.
func isMarker(t string) bool {
	return strings.HasPrefix(t, addPrefix) || strings.HasPrefix(t, deletePrefix) ||
		strings.HasPrefix(t, updatePrefix) || strings.HasPrefix(t, movePrefix) ||
		t == eofMarker || t == endMarker || t == beginMarker ||
		t == strings.TrimSpace(addPrefix) || t == strings.TrimSpace(deletePrefix) || t == strings.TrimSpace(updatePrefix)
}

func parseCodex(lines []string, first int) ([]FileChange, error) {
	last := len(lines) - 1
	if last < 1 || strings.TrimSpace(lines[last]) != endMarker {
		return nil, parseErrorf(first+last, "the patch does not end with %q (is it truncated?)", endMarker)
	}
	p := &codexParser{lines: lines[1:last], first: first + 1}
	var changes []FileChange
	for p.more() {
		t := p.trimmed()
		if t == "" || len(changes) == 0 && strings.HasPrefix(t, envPrefix) {
			p.i++
			continue
		}
		start := p.lineNo()
		var c FileChange
		switch {
		case strings.HasPrefix(t, addPrefix):
			c = FileChange{Kind: Add, Path: pathAfter(t, addPrefix), Line: start}
			p.i++
			var b strings.Builder
			for p.more() && strings.HasPrefix(p.lines[p.i], "+") {
				b.WriteString(p.lines[p.i][1:])
				b.WriteByte('\n')
				p.i++
			}
			c.Content = b.String()
		case strings.HasPrefix(t, deletePrefix):
			c = FileChange{Kind: Delete, Path: pathAfter(t, deletePrefix), Line: start}
			p.i++
		case strings.HasPrefix(t, updatePrefix):
			c = FileChange{Kind: Update, Path: pathAfter(t, updatePrefix), Line: start}
			p.i++
			if p.more() && strings.HasPrefix(p.trimmed(), movePrefix) {
				c.MoveTo = pathAfter(p.trimmed(), movePrefix)
				if c.MoveTo == "" {
					return nil, parseErrorf(p.lineNo(), "%q has no destination path", movePrefix)
				}
				p.i++
			}
			hunks, err := p.parseChunks(c.Path)
			if err != nil {
				return nil, err
			}
			if len(hunks) == 0 && c.MoveTo == "" {
				return nil, parseErrorf(start, "Update File %s has no changes: give at least one @@ chunk of ' ', '-' and '+' lines", c.Path)
			}
			c.Hunks = hunks
		default:
			return nil, parseErrorf(start, "%q is not a file header; expected '%s<path>', '%s<path>' or '%s<path>'", clip(t), addPrefix, deletePrefix, updatePrefix)
		}
		if c.Path == "" {
			return nil, parseErrorf(start, "%q names no file", clip(t))
		}
		changes = append(changes, c)
	}
	if len(changes) == 0 {
		return nil, ErrEmpty
	}
	return changes, nil
}

func pathAfter(t, prefix string) string { return strings.TrimSpace(t[len(prefix):]) }

// parseChunks reads an Update File's chunks up to the next file header.
func (p *codexParser) parseChunks(path string) ([]Hunk, error) {
	var hunks []Hunk
	for p.more() {
		t := p.trimmed()
		if isMarker(t) && t != eofMarker {
			break
		}
		if t == "" && !strings.HasPrefix(p.lines[p.i], " ") {
			// Blank lines between chunks separate them; inside a chunk they
			// are read below as empty context lines.
			p.i++
			continue
		}
		h := Hunk{Line: p.lineNo()}
		// One or more "@@ context" lines name where the chunk is (the class,
		// then the method); the first chunk may leave them out.
		sawHeader := false
		for p.more() && strings.HasPrefix(p.trimmed(), "@@") && (p.trimmed() == "@@" || strings.HasPrefix(p.trimmed(), "@@ ")) {
			sawHeader = true
			anchor := strings.TrimPrefix(strings.TrimPrefix(p.trimmed(), "@@"), " ")
			if m := unifiedRange().FindString(anchor); m != "" {
				anchor = anchor[len(m):]
			}
			if strings.TrimSpace(anchor) != "" {
				h.Anchors = append(h.Anchors, anchor)
			}
			p.i++
		}
		if !sawHeader && len(hunks) > 0 {
			return nil, parseErrorf(p.lineNo(), "%s: expected an @@ line to start chunk %d, got %q", path, len(hunks)+1, clip(p.lines[p.i]))
		}
		for p.more() {
			raw := p.lines[p.i]
			t := strings.TrimSpace(raw)
			if t == eofMarker {
				h.EndOfFile = true
				p.i++
				break
			}
			if raw == "" {
				h.Lines = append(h.Lines, Line{Context, ""})
				p.i++
				continue
			}
			// A line that starts with a space is context whatever it says:
			// an indented "*** Update File: x" inside a chunk is the file's
			// text, as in Codex. Unindented markers end the chunk.
			op := Op(raw[0])
			if op != Context && op != Remove && op != Insert || isMarker(t) && op != Context {
				if len(h.Lines) == 0 {
					return nil, parseErrorf(p.lineNo(), "%s: unexpected line %q in chunk %d; every chunk line starts with ' ' (context), '-' (remove) or '+' (add)", path, clip(raw), len(hunks)+1)
				}
				break
			}
			h.Lines = append(h.Lines, Line{op, raw[1:]})
			p.i++
		}
		if len(h.Lines) == 0 {
			return nil, parseErrorf(h.Line, "%s: chunk %d has no lines", path, len(hunks)+1)
		}
		if !hasChange(h.Lines) {
			return nil, parseErrorf(h.Line, "%s: chunk %d changes nothing (no '-' or '+' lines)", path, len(hunks)+1)
		}
		hunks = append(hunks, h)
	}
	return hunks, nil
}

func hasChange(lines []Line) bool {
	for _, l := range lines {
		if l.Op != Context {
			return true
		}
	}
	return false
}

// clip shortens a line quoted in an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
