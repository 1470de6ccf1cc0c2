package gitconfig

import (
	"bufio"
	"os"
	"strings"

	"github.com/wardenhq/warden/internal/regfile"
)

// Entry is one "key = value" of a git config file: section and key in
// lower case, the subsection as written (includeIf's condition).
type Entry struct {
	Section, Sub, Key, Value string
}

// Read parses a git config file. A file that does not exist has no
// entries; one that cannot be read is an error (callers fail closed). It
// reads only what Warden needs (sections, keys, quoted values) and errs
// towards seeing a variable: git's finer points (escapes inside
// subsections) do not change which keys exist.
func Read(path string) ([]Entry, error) {
	f, err := regfile.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	section, sub := "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20) // lines up to 1 MB
	pending, first := "", true
	for sc.Scan() {
		line := pending + sc.Text()
		if first {
			line, first = strings.TrimPrefix(line, "\ufeff"), false // git skips a UTF-8 BOM
		}
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
		out = append(out, Entry{Section: section, Sub: sub, Key: strings.ToLower(strings.TrimSpace(key)), Value: unquote(value)})
	}
	return out, sc.Err()
}

// unquote strips a value's comment and quotes and unescapes it.
func unquote(v string) string {
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
