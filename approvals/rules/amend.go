package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/sandbox"
)

// DefaultRulesFile is the file "Always allow" writes to, inside the user's
// rules directory (the same name Codex uses).
const DefaultRulesFile = "default.rules"

// AmendmentLine is the prefix_rule line that allows commands starting with
// prefix, exactly as it is appended to default.rules.
func AmendmentLine(prefix []string) string {
	q := make([]string, len(prefix))
	for i, t := range prefix {
		q[i] = starlarkQuote(t)
	}
	return fmt.Sprintf("prefix_rule(pattern=[%s], decision=\"allow\")", strings.Join(q, ", "))
}

// AppendAllowRule persists an allow rule for prefix in dir/default.rules. It
// holds an advisory lock on a sibling lock file for the whole read-modify-
// write, writes a temporary file and renames it over the original (so the
// file is never half-written), and does nothing when an identical line is
// already there. It reports whether it added the line.
func AppendAllowRule(dir string, prefix []string) (bool, error) {
	return AppendGrantRule(dir, prefix, sandbox.Grant{})
}

// AppendGrantRule is AppendAllowRule for a rule that carries a grant: the
// line has additional_permissions, so the rule keeps the sandbox.
func AppendGrantRule(dir string, prefix []string, g sandbox.Grant) (bool, error) {
	if len(prefix) == 0 {
		return false, errors.New("always allow: empty command prefix")
	}
	for _, t := range prefix {
		if !RuleToken(t) {
			return false, fmt.Errorf("always allow: token %q cannot be written as a rule", t)
		}
	}
	return appendRuleLine(dir, GrantRuleLine(prefix, g))
}

// RuleToken reports whether a rule file can hold t as a pattern token: the
// loader refuses empty ones, and a line break would split the rule line.
func RuleToken(t string) bool { return t != "" && !strings.ContainsAny(t, "\n\r") }

// appendRuleLine appends line to dir/default.rules under the rules file
// lock, atomically, unless an identical line is there. It reports whether
// it added the line.
func appendRuleLine(dir, line string) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("always allow: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, "."+DefaultRulesFile+".lock"))
	if err != nil {
		return false, err
	}
	defer unlock()

	path := filepath.Join(dir, DefaultRulesFile)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("always allow: %w", err)
	}
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == line {
			return false, nil
		}
	}
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString(line)
	buf.WriteByte('\n')
	// The result must still load: never leave a file the next start rejects.
	if _, err := ParseRules(path, buf.Bytes()); err != nil {
		return false, fmt.Errorf("always allow: %s would not load after the change: %w", path, err)
	}
	if err := writeFileAtomic(path, buf.Bytes(), 0o600); err != nil {
		return false, fmt.Errorf("always allow: %w", err)
	}
	return true, nil
}

// lockFile takes an exclusive advisory lock, waiting for other writers.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockExclusive(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		unlock(f)
		f.Close()
	}, nil
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and
// renames it into place.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
