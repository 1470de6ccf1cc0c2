package patch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

// MaxPatchBytes bounds the patch text Warden will parse. Agent patches are a
// few kilobytes; anything this large is a mistake, and refusing it early keeps
// a runaway model from making Warden hold hundreds of megabytes.
const MaxPatchBytes = 32 << 20

// ErrEmpty is returned for a patch with no file changes.
var ErrEmpty = errors.New("the patch is empty: it changes no files")

// ParseError is a patch that cannot be read, with the patch line it was found on.
type ParseError struct {
	Line int // 1-based line in the patch text; 0 when it concerns the whole text
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("patch line %d: %s", e.Line, e.Msg)
	}
	return "patch: " + e.Msg
}

func parseErrorf(line int, format string, a ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// Parse reads a patch in either format Warden accepts: the Codex "*** Begin
// Patch" envelope (optionally wrapped in a shell heredoc) or a unified / git
// diff. It returns the file changes in patch order.
func Parse(text string) ([]FileChange, error) {
	if len(text) > MaxPatchBytes {
		return nil, parseErrorf(0, "the patch is %d bytes, over the %d MiB limit; split it into smaller patches", len(text), MaxPatchBytes>>20)
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		line := 1 + strings.Count(text[:i], "\n")
		return nil, parseErrorf(line, "NUL byte in the patch; patches must be text (binary files cannot be patched)")
	}
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmpty
	}
	if first := firstLine(text); (strings.HasPrefix(first, "diff --git ") || strings.HasPrefix(first, "--- ")) && !strings.Contains(text, "\r") {
		// A plain unified diff: hand the text to go-gitdiff as it is.
		return parseUnified(text, 1)
	}
	if lines, first := unwrapHeredoc(splitLinesCR(text)); len(lines) > 0 && strings.TrimSpace(lines[0]) == beginMarker {
		return parseCodex(lines, first)
	}
	lines, first := unwrapHeredoc(splitLines(text))
	if looksUnified(lines) {
		return parseUnified(strings.Join(lines, "\n")+"\n", first)
	}
	return nil, parseErrorf(first, "not a patch: expected %q on the first line, or a unified diff (\"--- a/file\", \"+++ b/file\", \"@@ -l,n +l,n @@\")", beginMarker)
}

// firstLine is the first line of text that is not blank.
func firstLine(text string) string {
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		if strings.TrimSpace(line) != "" {
			return line
		}
		text = rest
	}
	return ""
}

// splitLines splits text into lines without terminators (a trailing "\r" is
// dropped, so CRLF diffs read the same as LF ones; a lone "\r" is content,
// as in git).
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// splitLinesCR splits a Codex patch: "\r\n", "\n" and a lone "\r" each
// end a line, as in Codex, so CRLF and old Mac patches read the same as LF
// ones.
func splitLinesCR(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return splitLines(strings.ReplaceAll(text, "\r", "\n"))
}

// unwrapHeredoc strips leading and trailing blank lines and a shell heredoc
// wrapper (<<EOF, <<'EOF', <<"EOF" … EOF) that models often leave around a
// patch. It returns the remaining lines and the 1-based patch line of the first.
func unwrapHeredoc(lines []string) ([]string, int) {
	first := 1
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines, first = lines[1:], first+1
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) >= 4 && heredocStart().MatchString(strings.TrimSpace(lines[0])) && strings.TrimSpace(lines[len(lines)-1]) == "EOF" {
		return lines[1 : len(lines)-1], first + 1
	}
	return lines, first
}

// heredocStart is the first line of a heredoc-wrapped patch: <<EOF, <<'EOF'
// or <<"EOF", perhaps after the apply_patch command a model copied from
// Codex's shell form ("apply_patch <<'EOF'").
var heredocStart = lazyre.New(`^(?:(?:apply_patch|applypatch)\s*)?<<\s*(?:EOF|'EOF'|"EOF")$`)

// looksUnified reports whether the text has a unified diff file header.
func looksUnified(lines []string) bool {
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// hasNUL reports whether text looks binary, by git's rule: a NUL byte in the
// first 8000 bytes.
func hasNUL(text string) bool {
	return strings.IndexByte(text[:min(len(text), 8000)], 0) >= 0
}
