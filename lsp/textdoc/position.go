package textdoc

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// LineStarts returns the byte offset of each line's start. LSP ends lines at
// "\n", "\r\n" or "\r".
func LineStarts(text string) []int {
	starts := make([]int, 1, 64)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineEnd is the offset where line i's content ends, before its line break.
func lineEnd(text string, starts []int, i int) int {
	end := len(text)
	if i+1 < len(starts) {
		end = starts[i+1]
	}
	for end > starts[i] && (text[end-1] == '\n' || text[end-1] == '\r') {
		end--
	}
	return end
}

// offsetOf converts an LSP position (line, UTF-16 code unit) to a byte offset.
// A line past the end is an error; a character past the end of its line
// means the end of the line, as the specification says.
func offsetOf(text string, starts []int, pos protocol.Position) (int, error) {
	line := int(pos.Line)
	if line == len(starts) && pos.Character == 0 {
		// The start of the line after the last: clients that assume a final
		// line break send it for the end of the document.
		return len(text), nil
	}
	if line >= len(starts) {
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", pos.Line, len(starts))
	}
	off, end := starts[line], lineEnd(text, starts, line)
	for units := uint32(0); units < pos.Character; {
		if off >= end {
			return end, nil
		}
		r, size := utf8.DecodeRuneInString(text[off:end])
		n := uint32(utf16.RuneLen(r))
		if n > 1 && units+n > pos.Character {
			// The position splits a surrogate pair: keep the whole character.
			return off, nil
		}
		if r == utf8.RuneError && size == 1 {
			n = 1
		}
		units += n
		off += size
	}
	return off, nil
}

// PositionAt converts a byte offset into an LSP position (UTF-16 columns).
func PositionAt(text string, starts []int, offset int) protocol.Position {
	offset = max(0, min(offset, len(text)))
	// Binary search for the last line start <= offset.
	lo, hi := 0, len(starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= offset {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	var units uint32
	for _, r := range text[starts[lo]:min(offset, lineEnd(text, starts, lo))] {
		units += uint32(max(1, utf16.RuneLen(r)))
	}
	return protocol.Position{Line: uint32(lo), Character: units}
}
