package patch

import (
	"fmt"
	"io/fs"
	"strings"
)

// Kind is what a FileChange does to its file.
type Kind int

const (
	// Add creates a file (replacing one that exists, as Codex does).
	Add Kind = iota + 1
	// Delete removes a file.
	Delete
	// Update edits a file in place, optionally moving it (MoveTo).
	Update
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Delete:
		return "delete"
	case Update:
		return "update"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// FileChange is one file's part of a patch, whatever format it came in.
type FileChange struct {
	Kind Kind
	// Path is the file as the patch names it: relative to the workspace root
	// or absolute, slash-separated.
	Path string
	// MoveTo is the destination of a move or rename ("" for none).
	MoveTo string
	// Content is an added file's full text.
	Content string
	// Hunks edit an existing file (Update; for a unified Delete they describe
	// the content being removed and are checked against it).
	Hunks []Hunk
	// Mode is the file mode the patch asks for (git diffs); 0 keeps the
	// existing mode, or the default for a new file.
	Mode fs.FileMode
	// Line is where this file's section starts in the patch (1-based).
	Line int
}

// Target is the path the change leaves behind: MoveTo for a move, else Path.
func (c *FileChange) Target() string {
	if c.MoveTo != "" {
		return c.MoveTo
	}
	return c.Path
}

// Hunk is one located edit: lines of context, deletions and additions.
type Hunk struct {
	// Anchors are Codex "@@ <context>" lines, found in order before the
	// hunk's own lines so a hunk can name the function it belongs to.
	Anchors []string
	Lines   []Line
	// EndOfFile pins the hunk's old lines to the end of the file.
	EndOfFile bool
	// OldStart is a unified hunk's 1-based old line number, a hint for where
	// to look; 0 when the format gives none.
	OldStart int
	// NewNoEOL says the hunk's last new line has no newline ("\ No newline at
	// end of file" in a unified diff). Only meaningful when NoEOLKnown.
	NewNoEOL   bool
	NoEOLKnown bool
	// Line is where the hunk starts in the patch (1-based).
	Line int
}

// Op is what a hunk line does.
type Op byte

const (
	Context Op = ' '
	Remove  Op = '-'
	Insert  Op = '+'
)

// Line is one line of a hunk, without its line terminator.
type Line struct {
	Op   Op
	Text string
}

// AddedLines are the lines the change writes that were not there: an added
// file's content, an update's inserted lines.
func (c *FileChange) AddedLines() []string {
	if c.Kind == Add {
		return strings.Split(strings.TrimSuffix(c.Content, "\n"), "\n")
	}
	var out []string
	for _, h := range c.Hunks {
		for _, l := range h.Lines {
			if l.Op == Insert {
				out = append(out, l.Text)
			}
		}
	}
	return out
}
