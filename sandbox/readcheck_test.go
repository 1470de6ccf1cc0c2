package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readCheckHome is a home that is also the workspace (an editor opened in
// ~), holding an SSH key, AWS credentials and ordinary files.
func readCheckHome(t *testing.T) (home string, p Policy) {
	t.Helper()
	home = t.TempDir()
	for rel, text := range map[string]string{
		".ssh/id_rsa": "KEY", ".aws/credentials": "AWS", "notes.txt": "notes", "src/main.go": "package main",
	} {
		os.MkdirAll(filepath.Join(home, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(home, rel), []byte(text), 0o600)
	}
	return home, Policy{Mode: WorkspaceWrite, Workspace: []string{home}, Reads: ReadPolicy{Home: home}}
}

func mustChecker(t *testing.T, p Policy) *ReadChecker {
	t.Helper()
	c, err := p.ReadChecker()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadCheckerHidesCredentialStores: the stores, a link to one and a
// path written through a hidden directory are refused with a message naming
// the setting to change; ordinary files (the twins) pass.
func TestReadCheckerHidesCredentialStores(t *testing.T) {
	home, p := readCheckHome(t)
	os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "src", "key"))
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "keys"))
	c := mustChecker(t, p)
	for _, hidden := range []string{".ssh/id_rsa", ".ssh", ".aws/credentials", "src/key", "keys/id_rsa", ".ssh/not-yet-there"} {
		err := c.Check(filepath.Join(home, hidden), "")
		var he *ReadHiddenError
		if !errors.As(err, &he) {
			t.Errorf("%s: %v, want hidden", hidden, err)
			continue
		}
		for _, want := range []string{"hidden by the read policy", "read_allow", `read_access = "full"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the message lacks %q: %s", hidden, want, err)
			}
		}
	}
	// The real path decides even when the name looks harmless.
	if err := c.Check(filepath.Join(home, "notes.txt"), filepath.Join(home, ".ssh", "id_rsa")); err == nil {
		t.Error("a file whose real path is the key passed")
	}
	for _, ok := range []string{"notes.txt", "src/main.go", "src", "."} {
		if err := c.Check(filepath.Join(home, ok), ""); err != nil {
			t.Errorf("twin %s: %v", ok, err)
		}
	}
}

// TestReadCheckerFollowsTheSettings: read_allow re-exposes one file,
// read_deny hides a workspace path, full hides nothing, restricted hides
// what lies outside its readable roots, and no sandbox hides nothing.
func TestReadCheckerFollowsTheSettings(t *testing.T) {
	home, p := readCheckHome(t)
	allow := p
	allow.Reads.Allow = []string{filepath.Join(home, ".aws", "credentials")}
	c := mustChecker(t, allow)
	if err := c.Check(filepath.Join(home, ".aws", "credentials"), ""); err != nil {
		t.Errorf("read_allow: %v", err)
	}
	if err := c.Check(filepath.Join(home, ".ssh", "id_rsa"), ""); err == nil {
		t.Error("read_allow of one store exposed another")
	}

	deny := p
	deny.Reads.Deny = []string{filepath.Join(home, "src", "*.go")}
	c = mustChecker(t, deny)
	if err := c.Check(filepath.Join(home, "src", "main.go"), ""); err == nil {
		t.Error("read_deny glob not hidden")
	}
	if err := c.Check(filepath.Join(home, "notes.txt"), ""); err != nil {
		t.Errorf("read_deny twin: %v", err)
	}

	full := p
	full.Reads.Access = ReadFull
	unsandboxed := p
	unsandboxed.Mode = DangerFullAccess
	for name, q := range map[string]Policy{"full": full, "danger-full-access": unsandboxed} {
		c = mustChecker(t, q)
		if err := c.Check(filepath.Join(home, ".ssh", "id_rsa"), ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	restricted := p
	restricted.Reads.Access = ReadRestricted
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "data"), []byte("x"), 0o644)
	c = mustChecker(t, restricted)
	if err := c.Check(filepath.Join(outside, "data"), ""); err == nil || !strings.Contains(err.Error(), "readable_roots") {
		t.Errorf("restricted, outside: %v", err)
	}
	if err := c.Check(filepath.Join(home, ".ssh", "id_rsa"), ""); err == nil {
		t.Error("restricted: the key inside the workspace passed")
	}
	if err := c.Check(filepath.Join(home, "notes.txt"), ""); err != nil {
		t.Errorf("restricted twin: %v", err)
	}
	restricted.Reads.ReadableRoots = []string{outside}
	if err := mustChecker(t, restricted).Check(filepath.Join(outside, "data"), ""); err != nil {
		t.Errorf("restricted with readable_roots: %v", err)
	}
}
