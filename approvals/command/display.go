package command

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/shlex"
)

// EscapeText makes model-written text safe to show on a terminal or in a
// dialog: every character that could move the cursor, erase or reorder what
// is shown, or hide itself is written as a visible escape, so what the user
// reads is exactly what runs. That covers C0 and C1 controls and DEL (\r,
// \x1b, \u009b...), bidirectional overrides and isolates, zero-width and
// other default-ignorable characters, line and paragraph separators,
// non-ASCII spaces (which look like a word break but are not one) and
// invalid UTF-8 (\xff). Letters in any script (é, 日本) stay as they are.
// Newlines are escaped too; use EscapeLines where line breaks should stay.
//
// Every dialog builder uses this one function, directly or through
// EscapeLines.
func EscapeText(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || HiddenRune(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // the common case: nothing to escape
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case HiddenRune(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// EscapeLines is EscapeText that keeps line breaks: each line is escaped on
// its own (a \r before a newline is still shown).
func EscapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = EscapeText(l)
	}
	return strings.Join(lines, "\n")
}

// NeedsEscape reports whether EscapeText changes s other than by escaping
// newlines: s holds characters a terminal or dialog would not show as they
// are.
func NeedsEscape(s string) bool {
	return EscapeLines(s) != s
}

// HiddenRune reports whether r must be escaped to be seen.
func HiddenRune(r rune) bool {
	switch {
	case r == ' ':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true // C0, DEL, C1
	case !unicode.IsGraphic(r):
		// Format characters (bidi controls U+202A-202E and U+2066-2069,
		// zero-width U+200B-200F, U+2060, U+FEFF, tag characters), line and
		// paragraph separators, private use, surrogates, unassigned.
		return true
	case unicode.Is(unicode.Zs, r):
		return true // a space that is not U+0020: part of the word it sits in
	case unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true // invisible by definition (U+034F, Hangul fillers, U+FE0F...)
	}
	return false
}

func escapeRune(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// Display limits: a command longer than maxShownBytes is shown as its first
// ShownHeadBytes and last shownTailBytes, with the count of bytes between;
// the heading quotes a command only up to maxHeadingBytes on one line. A
// one-line reason (Display) keeps the same shape, shorter.
const (
	MaxShownBytes   = 1500
	ShownHeadBytes  = 1000
	ShownTailBytes  = 400
	MaxHeadingBytes = 160
	MaxReasonBytes  = 300
	reasonHeadBytes = 200
	reasonTailBytes = 80
)

// HeadTail splits s into the part shown at the start, the part shown at the
// end and how many bytes between them are not shown (0 when s is shown in
// full, tail then empty).
func HeadTail(s string) (head, tail string, hidden int) {
	return CutMiddle(s, MaxShownBytes, ShownHeadBytes, ShownTailBytes)
}

// CutMiddle keeps s whole up to max bytes, else its first headBytes and
// last tailBytes, reporting how many bytes between are dropped. Cuts fall
// on character boundaries.
func CutMiddle(s string, max, headBytes, tailBytes int) (head, tail string, hidden int) {
	if len(s) <= max {
		return s, "", 0
	}
	h := headBytes
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - tailBytes
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h], s[t:], t - h
}

// NotShown is the marker between a long text's head and tail.
func NotShown(n int) string {
	return fmt.Sprintf("… %d bytes not shown …", n)
}

// IndentLines writes s (already escaped, lines kept) with each line
// indented, so no line of model-written text can pass for one of Warden's.
func IndentLines(b *strings.Builder, s, indent string) {
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("\n")
		b.WriteString(indent)
		b.WriteString(l)
	}
}

// maxListedCommands bounds the distinct command names a prompt lists.
const maxListedCommands = 16

// Programs says how many commands argv runs and which programs, from the
// shell analysis: "Runs 3 commands: touch, ls ×2". Each program is named
// once, with its count, so a payload cannot hide among repeats. It is empty
// for a plain command (one program, no shell script).
func Programs(argv []string) string {
	a := Analyze(argv)
	if a.Script == "" && len(a.Segments) <= 1 && len(a.Problems) == 0 {
		return ""
	}
	var order []string
	seen := map[string]int{}
	for _, s := range a.Segments {
		if len(s.Argv) == 0 {
			continue
		}
		if seen[s.Argv[0]] == 0 {
			order = append(order, s.Argv[0])
		}
		seen[s.Argv[0]]++
	}
	names := make([]string, 0, min(len(order), maxListedCommands)+1)
	for i, name := range order {
		if i == maxListedCommands {
			names = append(names, fmt.Sprintf("and %d other programs", len(order)-i))
			break
		}
		if n := seen[name]; n > 1 {
			names = append(names, fmt.Sprintf("%s ×%d", EscapeText(name), n))
		} else {
			names = append(names, EscapeText(name))
		}
	}
	var b strings.Builder
	switch len(a.Segments) {
	case 0:
		b.WriteString("Runs no command Warden could find")
	case 1:
		b.WriteString("Runs 1 command: " + strings.Join(names, ", "))
	default:
		fmt.Fprintf(&b, "Runs %d commands: %s", len(a.Segments), strings.Join(names, ", "))
	}
	if len(a.Problems) > 0 {
		fmt.Fprintf(&b, " (Warden cannot fully read this command: %s)", EscapeText(a.Problems[0]))
	}
	return b.String()
}

// Text is the full text of argv as shown: a shell invocation's
// script, else the words with shell quoting where needed. A blank script
// is shown with its shell (`bash -lc ”`), not as nothing. Unlike
// Display it is never cut or escaped; the dialog shows head and
// tail, escaped line by line.
func Text(argv []string) string {
	if s, _, ok := ShellScript(argv); ok && strings.TrimSpace(s) != "" {
		return s
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		if NeedsEscape(a) || strings.Contains(a, "\n") {
			q[i] = ansiCQuote(a)
		} else {
			q[i] = shellQuote(a)
		}
	}
	return strings.Join(q, " ")
}

// ansiCQuote writes a word holding hidden characters as bash's $'...', so
// the escapes shown are the shell's own spelling of the exact bytes.
func ansiCQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s)
	return "$'" + EscapeText(s) + "'"
}

// Display renders argv for one-line messages (reasons, progress,
// notices) as the dialog's heading does: the script of a shell invocation,
// else the words with shell quoting, hidden characters escaped (EscapeText,
// $'...' for a word that holds them), newlines as \n. A long command shows
// its head and its tail with the count of bytes between, never only its
// start.
func Display(argv []string) string {
	s := Text(argv)
	head, tail, hidden := CutMiddle(s, MaxReasonBytes, reasonHeadBytes, reasonTailBytes)
	if hidden == 0 {
		return EscapeText(s)
	}
	return EscapeText(head) + " " + NotShown(hidden) + " " + EscapeText(tail)
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if split, err := shlex.Split(s); err == nil && len(split) == 1 && split[0] == s && !strings.ContainsAny(s, "$`*?[]{}()<>|&;!~#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func PluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
