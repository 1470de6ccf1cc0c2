package rules

import (
	"os"
	"path/filepath"
	"slices"
)

// The workspace's identity is fixed by whoever starts the session (the
// editor's workspace folders, the CLI's --cwd), never found from markers a
// command can create. Its rules are its own .warden/rules and those of the
// directories above it; trust is per directory and exact.

// WorkspaceRuleSources lists the .warden/rules directories that apply in the
// workspace root: root's own and those of each directory above it that has a
// .warden, outermost first. Each may only tighten unless its own directory
// is trusted: a trusted directory does not lend its trust to the ones below.
// Nothing below root is consulted, so a .warden or .git a command creates in
// the workspace changes neither which rules apply nor their trust. root
// should be absolute with its links resolved.
func WorkspaceRuleSources(root string, trusted func(dir string) bool) []RuleSource {
	if root == "" {
		return nil
	}
	root = filepath.Clean(root)
	var out []RuleSource
	for d := root; ; d = filepath.Dir(d) {
		if d == root || hasWardenDir(d) {
			t := TrustTightenOnly
			if trusted != nil && trusted(d) {
				t = TrustFull
			}
			out = append(out, RuleSource{Dir: filepath.Join(d, ".warden", "rules"), Trust: t})
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// hasWardenDir reports a .warden directory in d. A mode-000 one is none: it
// is the placeholder an earlier Warden put at the missing name (left behind,
// or put in a shared /tmp by one running beside this one).
func hasWardenDir(d string) bool {
	p := filepath.Join(d, ".warden")
	st, err := os.Stat(p)
	return err == nil && st.IsDir() && st.Mode().Perm() != 0
}

// TrustedWorkspace reports whether dir is exactly one of the trusted
// workspaces, both sides absolute with their symbolic links resolved: a
// trusted /a/b trusts neither /a/bc nor /a/b/sub.
func TrustedWorkspace(trusted []string, dir string) bool {
	d, ok := realDir(dir)
	if !ok {
		return false
	}
	for _, t := range trusted {
		if r, ok := realDir(t); ok && r == d {
			return true
		}
	}
	return false
}

// realDir is p absolute, clean and with its links resolved; a path that does
// not exist is trusted by nobody.
func realDir(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	return filepath.Clean(r), true
}
