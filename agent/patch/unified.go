package patch

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/wardenhq/warden/internal/lazyre"
)

// gitdiffLine pulls the line number out of go-gitdiff's "gitdiff: line N: msg".
var gitdiffLine = lazyre.New(`^gitdiff: line (\d+): `)

// parseUnified reads a unified or git diff with go-gitdiff and converts its
// files to FileChanges. first is the patch line of text's first line. A big
// git diff is cut at file boundaries and its parts parsed at once.
func parseUnified(text string, first int) ([]FileChange, error) {
	parts := splitGitDiff(text, first, runtime.GOMAXPROCS(0))
	if len(parts) == 1 {
		return parseUnifiedPart(text, first)
	}
	results := make([][]FileChange, len(parts))
	err := parallel(len(parts), func(i int) error {
		var err error
		results[i], err = parseUnifiedPart(parts[i].text, parts[i].first)
		return err
	})
	if err != nil {
		return nil, err
	}
	var changes []FileChange
	for _, r := range results {
		changes = append(changes, r...)
	}
	return changes, nil
}

type diffPart struct {
	text  string
	first int
}

// splitGitDiff cuts a git diff of a megabyte or more into about n parts, each
// starting at a "diff --git" line, with the patch line each starts on.
func splitGitDiff(text string, first, n int) []diffPart {
	const minPart = 512 << 10
	if n < 2 || len(text) < 2*minPart {
		return []diffPart{{text, first}}
	}
	size := max(len(text)/n, minPart)
	var parts []diffPart
	start := 0
	for start < len(text) {
		cut := len(text)
		if start+size < len(text) {
			if i := strings.Index(text[start+size:], "\ndiff --git "); i >= 0 {
				cut = start + size + i + 1
			}
		}
		parts = append(parts, diffPart{text[start:cut], first})
		first += strings.Count(text[start:cut], "\n")
		start = cut
	}
	return parts
}

func parseUnifiedPart(text string, first int) ([]FileChange, error) {
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		msg := err.Error()
		line := 0
		if m := gitdiffLine().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = n + first - 1
			msg = msg[len(m[0]):]
		}
		if _, hunks := unifiedPositions(text, first); line > 0 {
			for i := len(hunks) - 1; i >= 0; i-- {
				if hunks[i] <= line {
					msg += fmt.Sprintf(" (in the hunk starting at patch line %d)", hunks[i])
					break
				}
			}
		}
		return nil, &ParseError{Line: line, Msg: "unified diff: " + msg}
	}
	if len(files) == 0 {
		return nil, ErrEmpty
	}
	fileLines, hunkLines := unifiedPositions(text, first)
	traditional := !strings.Contains(text, "diff --git ")
	var changes []FileChange
	hunkIdx := 0
	for i, f := range files {
		line := 0
		if i < len(fileLines) {
			line = fileLines[i]
		}
		oldName, newName := f.OldName, f.NewName
		if traditional {
			oldName, newName = stripSide(oldName), stripSide(newName)
		}
		name := newName
		if name == "" {
			name = oldName
		}
		switch {
		case f.IsBinary:
			return nil, parseErrorf(line, "%s: binary patches are not supported; Warden patches text files only", name)
		case f.IsCopy:
			return nil, parseErrorf(line, "%s: copies are not supported; add the file with its full content instead", name)
		}
		c := FileChange{Line: line}
		if f.NewMode != 0 && f.NewMode != f.OldMode {
			c.Mode = f.NewMode.Perm()
		}
		hunks := make([]Hunk, 0, len(f.TextFragments))
		for _, frag := range f.TextFragments {
			h := convertFragment(frag)
			if hunkIdx < len(hunkLines) {
				h.Line = hunkLines[hunkIdx]
			}
			hunkIdx++
			hunks = append(hunks, h)
		}
		switch {
		case f.IsNew:
			c.Kind, c.Path = Add, newName
			var b strings.Builder
			for _, frag := range f.TextFragments {
				for _, l := range frag.Lines {
					if l.New() {
						b.WriteString(l.Line)
					}
				}
			}
			c.Content = b.String()
		case f.IsDelete:
			c.Kind, c.Path, c.Hunks = Delete, oldName, hunks
		default:
			c.Kind, c.Path, c.Hunks = Update, oldName, hunks
			if f.IsRename && newName != oldName {
				c.MoveTo = newName
			}
			if len(hunks) == 0 && c.MoveTo == "" && c.Mode == 0 {
				return nil, parseErrorf(line, "%s: the diff changes nothing in this file", name)
			}
		}
		if c.Path == "" {
			return nil, parseErrorf(line, "a file header names no file")
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// stripSide drops the a/ or b/ that diff -u users and git put before paths.
// go-gitdiff strips them from git headers but not from traditional ones.
func stripSide(name string) string {
	if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
		return name[2:]
	}
	return name
}

func convertFragment(frag *gitdiff.TextFragment) Hunk {
	h := Hunk{OldStart: int(frag.OldPosition), NoEOLKnown: true, Lines: make([]Line, 0, len(frag.Lines))}
	lastNew := -1
	for i, l := range frag.Lines {
		var op Op
		switch l.Op {
		case gitdiff.OpContext:
			op = Context
		case gitdiff.OpDelete:
			op = Remove
		default:
			op = Insert
		}
		if l.New() {
			lastNew = i
		}
		text := strings.TrimSuffix(l.Line, "\n")
		text = strings.TrimSuffix(text, "\r")
		h.Lines = append(h.Lines, Line{op, text})
	}
	if lastNew >= 0 {
		h.NewNoEOL = frag.Lines[lastNew].NoEOL()
	}
	if frag.OldLines == 0 {
		// A pure insertion's old position is the line it goes after.
		h.OldStart = int(frag.OldPosition) + 1
	}
	return h
}

// unifiedPositions finds the patch lines of file headers and hunk headers, in
// order, so errors can name them (go-gitdiff does not keep positions).
func unifiedPositions(text string, first int) (files, hunks []int) {
	inGitHeader := false
	for n := first; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files = append(files, n)
			inGitHeader = true
		case strings.HasPrefix(line, "@@ -"):
			hunks = append(hunks, n)
			inGitHeader = false
		case strings.HasPrefix(line, "--- ") && strings.HasPrefix(rest, "+++ ") && !inGitHeader:
			files = append(files, n)
		}
		text = rest
	}
	return files, hunks
}
