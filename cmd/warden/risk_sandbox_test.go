package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDialogRiskAgreesWithSandboxLine: `rm -rf ~/.cache` asked to run
// sandboxed says the sandbox refuses the delete and what it would delete
// outside it, never a bare "deletes N files" beside "runs sandboxed". The
// twins: without the sandbox the fact is the plain delete, and a delete
// inside the workspace (which the sandbox lets through) stays plain.
func TestDialogRiskAgreesWithSandboxLine(t *testing.T) {
	home := dirOutsideWritableRoots(t) // a home under /tmp would sit in a writable root
	ws := filepath.Join(home, "ws")
	for _, f := range []string{".cache/a", ".cache/b/c", ".cache/b/d", "ws/build/x.o", "ws/build/y.o"} {
		writeFile(t, filepath.Join(home, f), "data\n")
	}
	cache := filepath.Join(home, ".cache")
	cases := []struct {
		name, sandbox string
		argv          []string
		want, reject  string
	}{
		{"outside the roots, sandboxed", "workspace-write", []string{"rm", "-rf", cache},
			"Risk: high: in the sandbox this delete is refused (outside the writable roots); outside it, it deletes 3 files (15 bytes) under ~/.cache/", "Risk: high: deletes"},
		{"a write outside the roots, sandboxed", "workspace-write", []string{"bash", "-c", "echo x >> ~/.profile"},
			"in the sandbox this write is refused; outside it, it writes outside the workspace: ~/.profile", "Risk: high: writes"},
		{"outside the roots, no sandbox", "danger-full-access", []string{"rm", "-rf", cache},
			"Risk: high: deletes 3 files (15 bytes) under ~/.cache/", "is refused"},
		{"inside the workspace", "workspace-write", []string{"rm", "-rf", "build"},
			"Risk: medium: deletes 2 files (10 bytes) under build/", "is refused"},
	}
	for _, c := range cases {
		args := append([]string{"exec", "--deny", "--approval", "untrusted", "--sandbox", c.sandbox, "--cwd", ws, "--"}, c.argv...)
		_, errOut, code := runWardenEnv(t, home, "", args...)
		if code != 77 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, c.reject) {
			t.Errorf("%s: exit %d, dialog:\n%s\nwant %q, not %q", c.name, code, errOut, c.want, c.reject)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "*")); len(files) != 2 {
		t.Errorf("the denied delete ran: %v", files)
	}
}
