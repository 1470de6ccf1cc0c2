package changes

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Change is what one run changed in one root.
type Change struct {
	Root  string // as the caller named it, made absolute
	Files []File
	// Moves pair a deleted file with a created one of the same content
	// (both are in Files too: undo deletes the one and restores the other).
	Moves []Move
	// Unreadable are directories that could not be listed: what the run
	// did there is neither recorded nor recoverable.
	Unreadable []string
	// InRepo: the root is in a git work tree (what is "committed" means).
	InRepo bool
	// Err is why the root could not be recorded at all.
	Err string
	// Flagged are the changed files that the user's own tools run
	// (Recorder callers set it: see Flag).
	Flagged []string
	// Overlapped name the other runs in the root whose time overlapped
	// this one's: what they changed meanwhile is in Files too.
	Overlapped []string
}

// File is one changed file: its state before (Existed, Before) and after.
type File struct {
	Rel         string
	Existed     bool
	Before      Source
	AfterExists bool
	AfterSum    string // SHA-256 of the content after, "" when not a readable file
	AfterMode   fs.FileMode
	AfterLink   string // the target after, when AfterMode is a link
	// Dirs are the directories a created entry is in that the run may
	// have made, innermost first: undo removes those it leaves empty.
	Dirs []string
}

// Move is a file the run renamed.
type Move struct{ From, To string }

// Kind says what happened to the file.
func (f File) Kind() string {
	switch {
	case !f.Existed:
		return "created"
	case !f.AfterExists:
		return "deleted"
	default:
		return "modified"
	}
}

// name is how a description names the file: a directory ends in "/".
func (f File) name() string {
	if (f.Existed && f.Before.Mode.IsDir()) || (!f.Existed && f.AfterMode.IsDir()) {
		return f.Rel + "/"
	}
	return f.Rel
}

// Committed reports a pre-image that git holds as the index has it.
func (f File) Committed() bool { return f.Before.GitObject != "" }

// Empty reports that nothing changed (and nothing went unrecorded).
func (c *Change) Empty() bool { return len(c.Files) == 0 && len(c.Unreadable) == 0 && c.Err == "" }

// Lost lists the changed files whose previous content was not kept, with why.
func (c *Change) Lost() []string {
	var out []string
	for _, f := range c.Files {
		if f.Existed && f.Before.Lost != "" {
			out = append(out, f.Rel+" ("+f.Before.Lost+")")
		}
	}
	for _, d := range c.Unreadable {
		out = append(out, d+"/ (not readable by Warden)")
	}
	if c.Err != "" {
		out = append(out, c.Root+" ("+c.Err+")")
	}
	return out
}

// Flag marks the changed files for which flagged is true, to be named first.
func (c *Change) Flag(flagged func(rel string) bool) {
	c.Flagged = nil
	for _, f := range c.Files {
		if flagged(f.Rel) {
			c.Flagged = append(c.Flagged, f.Rel)
		}
	}
}

// findMoves pairs deleted and created files of the same content, by
// SHA-256 or, for a committed file, by git blob name (createdGit).
func (c *Change) findMoves(createdGit map[string]string) {
	deleted := map[string][]string{} // content name → deleted paths
	for _, f := range c.Files {
		if f.Kind() == "deleted" {
			if name := f.Before.Blob + f.Before.GitObject; name != "" {
				deleted[name] = append(deleted[name], f.Rel)
			}
		}
	}
	if len(deleted) == 0 {
		return
	}
	for _, f := range c.Files {
		if f.Kind() != "created" {
			continue
		}
		for _, name := range []string{f.AfterSum, createdGit[f.Rel]} {
			if from := deleted[name]; name != "" && len(from) > 0 {
				c.Moves = append(c.Moves, Move{From: from[0], To: f.Rel})
				deleted[name] = from[1:]
				break
			}
		}
	}
}

// maxNamed is how many paths a description names before counting the rest.
const maxNamed = 3

// String describes the change in one line, the flagged files first:
// "changed .githooks/pre-commit (runs outside the sandbox); deleted 31 files
// under src/ (3 not committed); modified README.md".
func (c *Change) String() string {
	var parts []string
	if len(c.Flagged) > 0 {
		parts = append(parts, "changed "+names(c.Flagged)+" (run by your tools outside the sandbox)")
	}
	moved := map[string]bool{}
	for _, m := range c.Moves {
		moved[m.From], moved[m.To] = true, true
	}
	if len(c.Moves) > 0 {
		var ms []string
		for _, m := range c.Moves {
			ms = append(ms, m.From+" → "+m.To)
		}
		parts = append(parts, "moved "+names(ms))
	}
	for _, kind := range []string{"deleted", "modified", "created"} {
		var rels []string
		uncommitted := 0
		for _, f := range c.Files {
			if f.Kind() == kind && !moved[f.Rel] {
				rels = append(rels, f.name())
				if f.Existed && !f.Committed() && f.Before.Mode.IsRegular() {
					uncommitted++
				}
			}
		}
		if len(rels) == 0 {
			continue
		}
		p := kind + " " + group(rels)
		if kind != "created" && c.InRepo && uncommitted > 0 {
			p += fmt.Sprintf(" (%d not committed)", uncommitted)
		}
		parts = append(parts, p)
	}
	if lost := c.Lost(); len(lost) > 0 {
		parts = append(parts, "not recoverable: "+names(lost))
	}
	if len(parts) == 0 {
		return "changed no files"
	}
	if len(c.Overlapped) > 0 {
		parts = append(parts, "ran at the same time as "+names(c.Overlapped)+", whose changes may be counted here too")
	}
	return strings.Join(parts, "; ")
}

// group names a few paths, or counts them under their common directory.
func group(rels []string) string {
	if len(rels) <= maxNamed {
		return strings.Join(rels, ", ")
	}
	dir := commonDir(rels)
	if dir == "" {
		return fmt.Sprintf("%d files (%s, …)", len(rels), strings.Join(rels[:maxNamed], ", "))
	}
	return fmt.Sprintf("%d files under %s/", len(rels), dir)
}

func names(s []string) string {
	if len(s) <= maxNamed {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(s[:maxNamed], ", "), len(s)-maxNamed)
}

func commonDir(rels []string) string {
	sorted := append([]string(nil), rels...)
	sort.Strings(sorted)
	dir := path.Dir(sorted[0])
	for dir != "." {
		ok := true
		for _, r := range sorted {
			if !strings.HasPrefix(r, dir+"/") {
				ok = false
				break
			}
		}
		if ok {
			return dir
		}
		dir = path.Dir(dir)
	}
	return ""
}
