package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Through the real binary (issue 29): a sandboxed command cannot add a
// hook to a Mercurial repository's hgrc, a pager to a Jujutsu repository's
// config, or an enter hook to a monorepo package's mise.toml, and the new
// metadata it makes in a directory that had none is moved away. Twin: the
// repositories' data and the files beside them stay writable.
func TestProtectedEveryVCSAndNestedNamesThroughTheBinary(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	kept := map[string]string{
		".hg/hgrc":                        "[ui]\nusername = me\n",
		"vendor/lib/.jj/repo/config.toml": "[ui]\n",
		"services/api/mise.toml":          "[tools]\n",
	}
	for name, content := range kept {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(ws, "tools"), 0o755)
	script := `printf '[hooks]\nupdate = touch /tmp/pwned\n' >> .hg/hgrc
printf '[ui]\npager = "sh -c evil"\n' >> vendor/lib/.jj/repo/config.toml
printf '[hooks]\nenter = "sh -c evil"\n' >> services/api/mise.toml
mkdir -p tools/.hg && printf '[hooks]\n' > tools/.hg/hgrc
mkdir -p .hg/store && echo data > .hg/store/00changelog.i
mkdir -p vendor/lib/.jj/repo/op_store && echo op > vendor/lib/.jj/repo/op_store/o
echo 'package api' > services/api/main.go
true`
	_, errOut, code := wardenIn(t, isolated(home), "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for name, want := range kept {
		if got, _ := os.ReadFile(filepath.Join(ws, name)); string(got) != want {
			t.Errorf("attack: %s rewritten: %q", name, got)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "tools/.hg")); err == nil || !strings.Contains(errOut, "tools/.hg") {
		t.Errorf("attack: new tools/.hg left in place or not reported: %s", errOut)
	}
	for name, want := range map[string]string{".hg/store/00changelog.i": "data\n", "vendor/lib/.jj/repo/op_store/o": "op\n", "services/api/main.go": "package api\n"} {
		if got, _ := os.ReadFile(filepath.Join(ws, name)); string(got) != want {
			t.Errorf("twin: %s not writable: %q (%s)", name, got, errOut)
		}
	}
}
