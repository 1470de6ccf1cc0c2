package seatbelt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// seatbeltGit writes the git split of each root (Root.Git, see gitdata.go)
// after the writes' allow: the layout's entries in order, each a deny for a
// read-only entry or an allow for a git dir's data, so that the later rule
// wins as the Linux mounts do. Seatbelt matches paths, not files, so a
// missing config or hook is as read-only as an existing one: it cannot be
// created. Last, the git dirs themselves and the directories between the
// root and them may not be renamed or removed, or the command could move a
// git dir to a name no rule covers, write its config there and move it
// back.
//
// macOS volumes are usually case-insensitive: `mkdir .git/HOOKS` makes the
// hooks/ git then finds, under a name Seatbelt's path rules, which compare
// bytes, would not match. So each read-only entry and each pin is also
// denied by a regex that matches its path in every spelling (foldRegex).
func seatbeltGit(b *strings.Builder, roots []protect.Root, gitKey string, params []string) []string {
	n := 0
	param := func(path string) string {
		key := fmt.Sprintf("%s_%d", gitKey, n)
		n++
		params = append(params, fmt.Sprintf("-D%s=%s", key, path))
		return key
	}
	var pins []string
	for _, r := range roots {
		if len(r.Git) == 0 {
			continue
		}
		b.WriteString("\n; Git: each repository's data writable; what git executes or obeys, and new\n; submodule or worktree git dirs, not (even where missing).")
		for i := 0; i < len(r.Git); {
			writable := r.Git[i].Writable
			j := i
			for j < len(r.Git) && r.Git[j].Writable == writable {
				j++
			}
			if writable {
				b.WriteString("\n(allow file-write*")
			} else {
				b.WriteString("\n(deny file-write*")
			}
			for _, g := range r.Git[i:j] {
				fmt.Fprintf(b, "\n  (subpath (param %q))", param(g.Path))
				if !g.Writable {
					var filter string
					filter, params = regexParam(params, FoldRegex(g.Path, true))
					fmt.Fprintf(b, "\n  %s", filter)
				}
				if g.Writable {
					pins = append(pins, g.Path)
					if pathutil.Within(r.Path, g.Path) {
						pins = append(pins, pinnedDirs(r.Path, []string{g.Path})...)
					}
				}
			}
			b.WriteString(")")
			i = j
		}
		b.WriteString("\n")
	}
	if len(pins) == 0 {
		return params
	}
	slices.Sort(pins)
	b.WriteString("\n; The git dirs and the directories above them in the root stay where they are.\n(deny file-write*")
	for _, p := range slices.Compact(pins) {
		var filter string
		filter, params = regexParam(params, FoldRegex(p, false))
		fmt.Fprintf(b, "\n  (literal (param %q))\n  %s", param(p), filter)
	}
	b.WriteString(")\n")
	return params
}
