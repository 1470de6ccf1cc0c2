package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/approvals"
)

const (
	defaultReadLines = 2000
	maxLineBytes     = 2000
	maxListEntries   = 500
)

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (e *ToolEnv) readFile(ctx context.Context, raw json.RawMessage) (ToolResult, error) {
	var a readArgs
	if err := decodeArgs(raw, &a); err != nil {
		return ToolResult{}, err
	}
	offset, limit := 1, defaultReadLines
	if a.Offset != nil {
		if *a.Offset < 1 {
			return ToolResult{}, fmt.Errorf(`argument "offset" is a line number from 1, not %d`, *a.Offset)
		}
		offset = *a.Offset
	}
	if a.Limit != nil {
		if *a.Limit < 1 {
			return ToolResult{}, fmt.Errorf(`argument "limit" must be at least 1, not %d`, *a.Limit)
		}
		limit = *a.Limit
	}
	path, err := e.resolve(a.Path)
	if err != nil {
		return ToolResult{}, err
	}
	e.observer().Step("Reading " + e.rel(path))
	data, err := e.readChecked(ctx, "read_file", path)
	if err != nil {
		if res, err := refusalResult(err); err == nil {
			return res, nil
		}
		return ToolResult{}, fmt.Errorf("cannot read %s: %v", path, unwrapPathError(err))
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data[:min(len(data), 8000)]) {
		return ToolResult{}, fmt.Errorf("%s is a binary file (%d bytes); read only text files", path, len(data))
	}
	var b strings.Builder
	lines := strings.SplitAfter(string(data), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if offset > len(lines) && len(lines) > 0 {
		return ToolResult{}, fmt.Errorf(`argument "offset" %d is past the end: %s has %d lines`, offset, path, len(lines))
	}
	end := min(len(lines), offset-1+limit)
	for i := offset - 1; i < end; i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if len(line) > maxLineBytes {
			line = truncateUTF8(line, maxLineBytes) + " [line truncated]"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "[%d more lines; read on with offset %d]\n", len(lines)-end, end+1)
	}
	if len(lines) == 0 {
		b.WriteString("[empty file]\n")
	}
	return ToolResult{Content: b.String()}, nil
}

type listArgs struct {
	Path  string `json:"path"`
	Depth *int   `json:"depth"`
}

func (e *ToolEnv) listDir(_ context.Context, raw json.RawMessage) (ToolResult, error) {
	var a listArgs
	if err := decodeArgs(raw, &a); err != nil {
		return ToolResult{}, err
	}
	depth := 2
	if a.Depth != nil {
		if *a.Depth < 1 || *a.Depth > 5 {
			return ToolResult{}, fmt.Errorf(`argument "depth" must be 1 to 5, not %d`, *a.Depth)
		}
		depth = *a.Depth
	}
	path, err := e.resolve(a.Path)
	if err != nil {
		return ToolResult{}, err
	}
	guard, err := e.reads().ReadGuard(e.Dir)
	if err != nil {
		return ToolResult{}, err
	}
	top, err := openDirChecked(guard, path)
	if err != nil {
		return refusalResult(err)
	}
	e.observer().Step("Listing " + e.rel(path))
	var b strings.Builder
	fmt.Fprintf(&b, "%s/\n", path)
	n := 0
	var walk func(dir string, d *os.File, level int) error
	walk = func(dir string, d *os.File, level int) error {
		entries, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			fmt.Fprintf(&b, "%s[cannot read: %v]\n", strings.Repeat("  ", level), unwrapPathError(err))
			return nil
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, ent := range entries {
			if n >= maxListEntries {
				return errStopWalk
			}
			n++
			name, full := ent.Name(), filepath.Join(dir, ent.Name())
			if ent.IsDir() {
				name += "/"
			} else if ent.Type()&os.ModeSymlink != 0 {
				name += "@"
			}
			// A hidden entry is named, as in a sandboxed `ls`, never opened.
			if guard.Hidden(full, "") != nil {
				fmt.Fprintf(&b, "%s%s [hidden by the read policy]\n", strings.Repeat("  ", level+1), name)
				continue
			}
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", level+1), name)
			// .git and dependency trees are huge and rarely what the model wants.
			if !ent.IsDir() || level+1 >= depth || ent.Name() == ".git" || ent.Name() == "node_modules" {
				continue
			}
			sub, err := openDirChecked(guard, full)
			if err != nil {
				fmt.Fprintf(&b, "%s[not listed: %v]\n", strings.Repeat("  ", level+2), err)
				continue
			}
			if err := walk(full, sub, level+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(path, top, 0); err != nil {
		fmt.Fprintf(&b, "[stopped after %d entries; list a subdirectory for more]\n", maxListEntries)
	}
	return ToolResult{Content: b.String()}, nil
}

// openDirChecked opens the directory path and checks where the opened
// directory really is against the read policy, so a directory swapped for a
// link after the check lists nothing hidden.
func openDirChecked(guard *approvals.ReadGuard, path string) (*os.File, error) {
	if err := guard.Hidden(path, ""); err != nil {
		return nil, hiddenRefusal(err)
	}
	d, err := openNoBlock(path)
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %v", path, unwrapPathError(err))
	}
	if err := guard.Hidden(path, realPath(d, path)); err != nil {
		d.Close()
		return nil, hiddenRefusal(err)
	}
	if st, err := d.Stat(); err != nil || !st.IsDir() {
		d.Close()
		return nil, fmt.Errorf("%s is a file, not a directory; use read_file", path)
	}
	return d, nil
}

var errStopWalk = errors.New("too many entries")

func (e *ToolEnv) rel(path string) string {
	if r, err := filepath.Rel(e.Dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
