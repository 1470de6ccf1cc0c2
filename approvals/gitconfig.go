package approvals

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// gitConfigEntry is one "key = value" of a git config file: section and key
// lower-cased, the subsection as written.
type gitConfigEntry struct {
	section, sub, key, value string
}

// readGitConfig parses a git config file. A file that does not exist has no
// entries; one that cannot be read is an error (the caller fails closed).
// It reads only what Warden needs (sections, keys, quoted values); git's
// finer points (escapes inside subsections) do not change which keys exist.
func readGitConfig(path string) ([]gitConfigEntry, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []gitConfigEntry
	section, sub := "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	pending := ""
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			pending = strings.TrimSuffix(line, `\`) // continued on the next line
			continue
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 0 {
				continue
			}
			head := line[1:end]
			section, sub = head, ""
			if i := strings.IndexAny(head, " \t"); i >= 0 {
				section, sub = head[:i], strings.Trim(strings.TrimSpace(head[i:]), `"`)
			} else if i := strings.Index(head, "."); i >= 0 {
				section, sub = head[:i], head[i+1:]
			}
			section = strings.ToLower(section)
			line = strings.TrimSpace(line[end+1:]) // "[core] key = v" on one line
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		out = append(out, gitConfigEntry{section: section, sub: sub, key: strings.ToLower(strings.TrimSpace(key)), value: configValue(value)})
	}
	return out, sc.Err()
}

// configValue strips a value's comment and quotes and unescapes it.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// gitJudge decides whether the files a git command reads could have been
// written by a sandboxed command.
type gitJudge struct {
	roots     []string // resolved writable roots and temporary directories
	protected []string // paths the sandbox keeps read-only inside them
}

// safe: outside the writable roots, inside a part of a git dir the sandbox
// holds read-only (its config, hooks...: not its data), or inside a
// protected path.
func (j gitJudge) safe(p string) bool {
	if outside, _, readOnly := gitPlace(p, j.roots); outside || readOnly {
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

// configProtected reads a config file and every file it includes (include
// and includeIf, whatever the condition: git may meet it), and reports
// whether all of them are safe, with the entries they hold. worktree is
// where a relative core.hooksPath points (empty for global files).
func (j gitJudge) configProtected(file, worktree string, depth int) ([]gitConfigEntry, bool) {
	return j.configCheck(file, worktree, depth, false)
}

// configCheck is configProtected for a file known to be safe (held) or not.
func (j gitJudge) configCheck(file, worktree string, depth int, held bool) ([]gitConfigEntry, bool) {
	if depth > 10 || (!held && !j.safe(file)) {
		return nil, false
	}
	entries, err := readGitConfig(file)
	if err != nil {
		return nil, false
	}
	all := entries
	for _, e := range entries {
		switch {
		case (e.section == "include" || e.section == "includeif") && e.key == "path":
			inc := expandHome(e.value)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(file), inc)
			}
			// One the sandbox holds read-only (or masks) as it does the
			// config is safe; what it includes in turn is judged as usual.
			more, ok := j.configCheck(inc, worktree, depth+1, includeHeld(file, e.value, j.roots))
			if !ok {
				return nil, false
			}
			all = append(all, more...)
		case e.section == "core" && e.key == "hookspath":
			// Hooks run on commit, merge, checkout...: a hooks directory in
			// the work tree (husky's .husky) is the sandbox's to rewrite.
			h := expandHome(e.value)
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
func globalConfigFiles() []string {
	var out []string
	if g := gitEnv("GIT_CONFIG_GLOBAL"); g != "" {
		out = append(out, g)
	} else {
		if h := gitEnv("HOME"); h != "" {
			out = append(out, filepath.Join(h, ".gitconfig"))
		}
		if x := gitEnv("XDG_CONFIG_HOME"); x != "" {
			out = append(out, filepath.Join(x, "git", "config"))
		} else if h := gitEnv("HOME"); h != "" {
			out = append(out, filepath.Join(h, ".config", "git", "config"))
		}
	}
	if s := gitEnv("GIT_CONFIG_SYSTEM"); s != "" {
		out = append(out, s)
	} else {
		out = append(out, "/etc/gitconfig")
	}
	if c := gitEnv("GIT_CONFIG"); c != "" {
		out = append(out, c)
	}
	return out
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h := gitEnv("HOME"); h != "" {
			return filepath.Join(h, rest)
		}
	}
	return p
}

func configValueOf(entries []gitConfigEntry, section, key string) (string, bool) {
	v, found := "", false
	for _, e := range entries {
		if e.section == section && e.sub == "" && e.key == key {
			v, found = e.value, true // the last one wins, as in git
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
