package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"path/filepath"
	"testing"
)

func TestBoundaryIsWithinComparesComponents(t *testing.T) {
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/", "/a/b", true},
		{"/a/bc", "/a/b", false}, // the string-prefix mistake
		{"/a/b/../c", "/a/b", false},
		{"/a", "/a/b", false},
		{"a/b", "a", false}, // relative paths are never inside
		{"/x", "/", true},
	} {
		if got := IsWithin(c.path, c.root); got != c.want {
			t.Errorf("IsWithin(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}

// The root's and its ancestors' .warden/rules apply, each trusted only when
// its own directory is; nothing below the root is consulted.
func TestBoundaryWorkspaceRuleSources(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{filepath.Join(parent, ".warden", "rules"), filepath.Join(ws, "sub", ".warden", "rules")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trusted := func(dir string) bool { return dir == parent }
	got := map[string]rules.Trust{}
	for _, s := range rules.WorkspaceRuleSources(ws, trusted) {
		got[s.Dir] = s.Trust
	}
	if tr, ok := got[filepath.Join(parent, ".warden", "rules")]; !ok || tr != rules.TrustFull {
		t.Errorf("the trusted parent's rules: %v (present %v)", tr, ok)
	}
	if tr, ok := got[filepath.Join(ws, ".warden", "rules")]; !ok || tr != rules.TrustTightenOnly {
		t.Errorf("the root's rules below a trusted parent must stay tighten-only: %v (present %v)", tr, ok)
	}
	if _, ok := got[filepath.Join(ws, "sub", ".warden", "rules")]; ok {
		t.Errorf("a subdirectory's rules were consulted: %v", got)
	}
}

func TestBoundaryTrustedWorkspaceIsExact(t *testing.T) {
	base := t.TempDir()
	ws, wsc, sub := filepath.Join(base, "b"), filepath.Join(base, "bc"), filepath.Join(base, "b", "sub")
	for _, d := range []string{wsc, sub} {
		os.MkdirAll(d, 0o755)
	}
	link := filepath.Join(base, "link")
	os.Symlink(ws, link)
	list := []string{ws}
	for dir, want := range map[string]bool{ws: true, link: true, ws + "/": true, wsc: false, sub: false, "relative": false} {
		if got := rules.TrustedWorkspace(list, dir); got != want {
			t.Errorf("TrustedWorkspace(%q) = %v, want %v", dir, got, want)
		}
	}
	if !rules.TrustedWorkspace([]string{link}, ws) {
		t.Error("a trusted path written through a link must trust where it leads")
	}
}

// A mode-000 placeholder an earlier Warden left for a missing .warden (in
// /tmp, say) is no rules directory of an ancestor; the twin, a real .warden
// there, is one.
func TestBoundaryWorkspaceRuleSourcesSkipPlaceholders(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	os.MkdirAll(ws, 0o755)
	marker := filepath.Join(parent, ".warden")
	if err := os.Mkdir(marker, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(marker, 0o755)
	has := func() bool {
		for _, s := range rules.WorkspaceRuleSources(ws, nil) {
			if s.Dir == filepath.Join(marker, "rules") {
				return true
			}
		}
		return false
	}
	if has() {
		t.Error("a placeholder .warden became a rules directory")
	}
	os.Chmod(marker, 0o755)
	if !has() {
		t.Error("a real .warden above the root was not consulted")
	}
}
