package protect

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/internal/regfile"
)

// A rebase or cherry-pick that stopped (a conflict, an edit step) keeps its
// remaining steps in the git dir, and the git dir's data is the sandbox's
// to write so that a sandboxed rebase works. An exec step in that list is a
// shell command: the user's `git rebase --continue` on the host runs it,
// outside the sandbox. So the exec steps a run added (by hand, or by a
// sandboxed `git rebase -x`) are taken out of the list when the run ends,
// and reported; the steps the user's own rebase had are kept.

// gitTodoFiles are the step lists of a git dir, as git's sequencer reads
// them: an interactive rebase's, and a cherry-pick's or revert's.
var gitTodoFiles = []string{
	filepath.Join("rebase-merge", "git-rebase-todo"),
	filepath.Join("sequencer", "todo"),
}

// TodoWatch holds the exec steps each step list of the roots' writable git
// dirs had when the run started.
type TodoWatch struct {
	roots  []string                  // the run's writable roots
	before map[string]map[string]int // list → exec step → count
}

// maxTodo bounds the step list read: git's are a few kilobytes.
const maxTodo = 4 << 20

// readTodo reads the step list p when it is a regular file within the
// run's writable roots, links resolved (the command can have written
// nothing else; a FIFO it left there would block the read). ok is false
// when there is nothing to check; err says why a list could not be.
func (w *TodoWatch) readTodo(p string) (data []byte, ok bool, err error) {
	if _, err := os.Lstat(p); err != nil {
		return nil, false, nil // most runs: no rebase stopped
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, false, nil
	}
	inside := false
	for _, r := range w.roots {
		inside = inside || pathutil.Within(r, real)
	}
	st, err := os.Stat(real)
	if !inside || err != nil || !st.Mode().IsRegular() {
		return nil, false, nil
	}
	data, err = regfile.Read(real, maxTodo)
	if errors.Is(err, regfile.ErrTooLarge) {
		return nil, false, fmt.Errorf("%d bytes, too large to check", st.Size())
	}
	return data, err == nil, err
}

// WatchTodos notes the exec steps of the roots' git dirs' step lists.
func WatchTodos(roots []Root) *TodoWatch {
	w := &TodoWatch{before: map[string]map[string]int{}}
	for _, r := range roots {
		w.roots = append(w.roots, r.Path)
	}
	for _, r := range roots {
		for _, gp := range r.Git {
			if !gp.Writable || gp.VCS != "" {
				continue
			}
			for _, name := range gitTodoFiles {
				p := filepath.Join(gp.Path, name)
				steps := map[string]int{}
				if data, ok, _ := w.readTodo(p); ok {
					for _, line := range execSteps(data) {
						steps[line]++
					}
				}
				w.before[p] = steps
			}
		}
	}
	return w
}

// execSteps are the exec steps of a step list ("exec CMD" or "x CMD", as
// git parses them: after blanks, the word and a blank), trimmed.
func execSteps(data []byte) []string {
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if s, ok := execStep(string(line)); ok {
			out = append(out, s)
		}
	}
	return out
}

func execStep(line string) (string, bool) {
	s := strings.TrimSpace(line)
	word, rest, ok := strings.Cut(strings.Replace(s, "\t", " ", 1), " ")
	if !ok || (word != "exec" && word != "x") || strings.TrimSpace(rest) == "" {
		return "", false
	}
	return s, true
}

// Disarm takes out of each list the exec steps it did not have when the
// run started, and reports each. A list that cannot be rewritten is
// reported with the error: the step is still there.
func (w *TodoWatch) Disarm(cwd string) []Removed {
	if w == nil {
		return nil
	}
	var out []Removed
	for p, before := range w.before {
		data, ok, err := w.readTodo(p)
		if err != nil {
			out = append(out, Removed{Path: p, Shown: ShownPath(cwd, p), Step: "exec", Err: fmt.Sprintf("read the list: %v", err)})
		}
		if !ok {
			continue // gone, never there, or nothing the command could write
		}
		left := make(map[string]int, len(before))
		for k, v := range before {
			left[k] = v
		}
		var kept [][]byte
		var added []string
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if s, ok := execStep(string(line)); ok {
				if left[s] == 0 {
					added = append(added, s)
					continue
				}
				left[s]--
			}
			kept = append(kept, line)
		}
		if len(added) == 0 {
			continue
		}
		mode := os.FileMode(0o644)
		if st, err := os.Stat(p); err == nil {
			mode = st.Mode().Perm()
		}
		werr := writeReplacing(p, bytes.Join(kept, nil), mode)
		for _, s := range added {
			r := Removed{Path: p, Shown: ShownPath(cwd, p), Step: s}
			if werr != nil {
				r.Err = fmt.Sprintf("rewrite the list: %v", werr)
			}
			out = append(out, r)
		}
	}
	return out
}
