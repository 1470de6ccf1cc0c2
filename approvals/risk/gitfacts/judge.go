package gitfacts

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
)

// Judge decides whether the files a git command reads could have been
// written by a sandboxed command.
type Judge struct {
	Roots     []string // resolved writable roots and temporary directories
	protected []string // paths the sandbox keeps read-only inside them
}

// safe: outside the writable roots, inside a part of a git dir the sandbox
// holds read-only (its config, hooks...: not its data), or inside a
// protected path.
func (j Judge) safe(p string) bool {
	if outside, _, readOnly := gitPlace(p, j.Roots); outside || readOnly {
		return true
	}
	rp := resolvePath(p)
	for _, pp := range j.protected {
		if pathWithin(resolvePath(pp), rp) {
			return true
		}
	}
	return false
}

// ConfigProtected reads a config file and every file it includes (include
// and includeIf, whatever the condition: git may meet it), and reports
// whether all of them are safe, with the entries they hold. worktree is
// where a relative core.hooksPath points (empty for global files).
func (j Judge) ConfigProtected(file, worktree string, depth int) ([]gitconfig.Entry, bool) {
	return j.configCheck(file, worktree, depth, false)
}

// configCheck is configProtected for a file known to be safe (held) or not.
func (j Judge) configCheck(file, worktree string, depth int, held bool) ([]gitconfig.Entry, bool) {
	if depth > 10 || (!held && !j.safe(file)) {
		return nil, false
	}
	entries, err := gitconfig.Read(file)
	if err != nil {
		return nil, false
	}
	all := entries
	for _, e := range entries {
		switch {
		case (e.Section == "include" || e.Section == "includeif") && e.Key == "path":
			inc := expandHome(e.Value)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(file), inc)
			}
			// One the sandbox holds read-only (or masks) as it does the
			// config is safe; what it includes in turn is judged as usual.
			more, ok := j.configCheck(inc, worktree, depth+1, includeHeld(file, e.Value, j.Roots))
			if !ok {
				return nil, false
			}
			all = append(all, more...)
		case e.Section == "core" && e.Key == "hookspath":
			// Hooks run on commit, merge, checkout...: a hooks directory in
			// the work tree (husky's .husky) is the sandbox's to rewrite.
			h := expandHome(e.Value)
			if !filepath.IsAbs(h) {
				if worktree == "" {
					return nil, false
				}
				h = filepath.Join(worktree, h)
			}
			if !j.safe(h) {
				return nil, false
			}
		}
	}
	return all, true
}

// globalConfigFiles are the user's and the system's git config files, as
// git finds them.
func globalConfigFiles() []string { return gitconfig.GlobalFiles(Env) }

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h := Env("HOME"); h != "" {
			return filepath.Join(h, rest)
		}
	}
	return p
}

func configValueOf(entries []gitconfig.Entry, section, key string) (string, bool) {
	v, found := "", false
	for _, e := range entries {
		if e.Section == section && e.Sub == "" && e.Key == key {
			v, found = e.Value, true // the last one wins, as in git
		}
	}
	return v, found
}

// includeHeld: file is a git dir's own config and value a relative path
// inside that git dir, which the sandbox holds read-only (or masks when
// missing) like the config itself.
func includeHeld(file, value string, roots []string) bool {
	if filepath.Base(file) != "config" || value == "" || filepath.IsAbs(value) || strings.HasPrefix(value, "~") || strings.HasPrefix(value, "%(") {
		return false
	}
	dir := filepath.Dir(file)
	if outside, gitDir, _ := gitPlace(dir, roots); outside || !gitDir {
		return false
	}
	inc := filepath.Join(dir, value)
	return inc != dir && pathWithin(dir, inc)
}
