package patch

import (
	"strings"
	"unicode"
)

// level is a rung of the tolerance ladder, from strict to lenient. Codex uses
// the same four; a hunk is located at the strictest rung where it matches.
type level int

const (
	exact         level = iota
	trailingSpace       // trailing whitespace ignored
	trimmed             // leading and trailing whitespace ignored
	punctuation         // trimmed, and typographic punctuation read as ASCII
	levels
)

func (l level) String() string {
	return [...]string{"exactly", "ignoring trailing whitespace", "ignoring surrounding whitespace", "ignoring whitespace and typographic punctuation"}[l]
}

func normalize(l level, s string) string {
	switch l {
	case trailingSpace:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case trimmed:
		return strings.TrimSpace(s)
	case punctuation:
		return asciiPunctuation(strings.TrimSpace(s))
	}
	return s
}

// asciiPunctuation maps the dashes, quotes and spaces that models and word
// processors produce to their ASCII forms.
func asciiPunctuation(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '\u2010' && r <= '\u2015', r == '\u2212':
			return '-'
		case r == '\u2018', r == '\u2019', r == '\u201A', r == '\u201B':
			return '\''
		case r == '\u201C', r == '\u201D', r == '\u201E', r == '\u201F':
			return '"'
		case r == '\u00A0', r >= '\u2002' && r <= '\u200A', r == '\u202F', r == '\u205F', r == '\u3000':
			return ' '
		}
		return r
	}, s)
}

// text is a file's lines prepared for matching, with lazily built copies
// normalised for each rung of the ladder.
type text struct {
	lines []string
	norm  [levels][]string
}

func (t *text) at(l level) []string {
	if l == exact {
		return t.lines
	}
	if t.norm[l] == nil {
		n := make([]string, len(t.lines))
		for i, s := range t.lines {
			n[i] = normalize(l, s)
		}
		t.norm[l] = n
	}
	return t.norm[l]
}

// matchesAt reports whether pattern matches t at line i on rung l.
func (t *text) matchesAt(l level, pattern []string, i int) bool {
	if i < 0 || i+len(pattern) > len(t.lines) {
		return false
	}
	lines := t.at(l)
	for j, p := range pattern {
		if lines[i+j] != normalize(l, p) {
			return false
		}
	}
	return true
}

// find returns every line in [lo, hi] where pattern starts, on the strictest
// rung with any match, stopping after limit matches (0: no limit).
func (t *text) find(pattern []string, lo, hi, limit int) ([]int, level) {
	if hi > len(t.lines)-len(pattern) {
		hi = len(t.lines) - len(pattern)
	}
	for l := exact; l < levels; l++ {
		lines := t.at(l)
		norm := make([]string, len(pattern))
		for j, p := range pattern {
			norm[j] = normalize(l, p)
		}
		var found []int
	scan:
		for i := lo; i <= hi; i++ {
			if len(norm) > 0 && lines[i] != norm[0] {
				continue
			}
			for j := 1; j < len(norm); j++ {
				if lines[i+j] != norm[j] {
					continue scan
				}
			}
			found = append(found, i)
			if limit > 0 && len(found) == limit {
				break
			}
		}
		if len(found) > 0 {
			return found, l
		}
	}
	return nil, exact
}

// closest reports how far pattern gets at its best partial match in [lo, n):
// the line where the longest matching prefix starts and its length. It lets
// a "not found" error say which line differs.
func (t *text) closest(pattern []string, lo int) (at, n int) {
	at = -1
	lines := t.at(trimmed)
	for i := lo; i < len(lines); i++ {
		k := 0
		for k < len(pattern) && i+k < len(lines) && lines[i+k] == normalize(trimmed, pattern[k]) {
			k++
		}
		if k > n {
			at, n = i, k
		}
	}
	return at, n
}
