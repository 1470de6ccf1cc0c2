package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxToolOutput bounds the text one tool call returns to the model: enough
// for a failing test run, small enough to leave room for the conversation.
const MaxToolOutput = 16 << 10

// Truncate keeps the head and the tail of s within max bytes and says in the
// middle what was left out. The head shows how a command started, the tail
// how it ended (errors and summaries usually come last).
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const noteRoom = 120
	keep := max - noteRoom
	if keep < 2 {
		keep = 2
	}
	head := truncateUTF8(s[:keep/2], keep/2)
	tail := s[len(s)-keep/2:]
	// Start the tail on a whole rune, and both cuts on whole lines when a
	// newline is near.
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	if i := strings.LastIndexByte(head, '\n'); i > len(head)*3/4 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/4 {
		tail = tail[i+1:]
	}
	omitted := s[len(head) : len(s)-len(tail)]
	sep := "\n"
	if strings.HasSuffix(head, "\n") {
		sep = ""
	}
	return fmt.Sprintf("%s%s[... %d bytes (%d lines) omitted from the middle of %d bytes of output ...]\n%s",
		head, sep, len(omitted), strings.Count(omitted, "\n"), len(s), tail)
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
