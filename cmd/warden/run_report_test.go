package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// `warden run` says on the terminal what became of every command and patch:
// the exit status, "denied", "patched: M file" or "patch failed", and says
// "Running" only after the question was answered.
func TestRunReportsOutcomes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	os.WriteFile(filepath.Join(dir, "build", "out"), []byte("x"), 0o644)
	// Repository data makes the deletion high risk, so it asks even under
	// on-request (a plain build/ inside the workspace would just run).
	os.MkdirAll(filepath.Join(dir, "build", ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "build", ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "exit3", Name: "shell", Args: `{"command":["sh","-c","exit 3"]}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "rm", Name: "shell", Args: `{"command":["rm","-rf","build"]}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "bad", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: greet.txt\n@@\n-goodbye\n+hello, world\n*** End Patch\n"}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "good", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: greet.txt\n@@\n-hello\n+hello, world\n*** End Patch\n"}`}}},
		modeltest.Turn{Text: "Done."},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, dir, "--deny", "tidy up")
	if code != 0 {
		t.Fatalf("a run whose last patch landed: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"› Running sh -c 'exit 3' (sandboxed)\n  exit 3 (",
		"  denied: rm -rf build",
		"patch failed, nothing changed:",
		"patched: M greet.txt\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Denied, so never said to be running; and the question came first.
	if strings.Contains(stderr, "Running rm") {
		t.Errorf("a denied command was announced as running:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "out")); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	if ask, deny := strings.Index(stderr, "(--deny: denied)"), strings.Index(stderr, "denied: rm -rf build"); ask < 0 || deny < ask {
		t.Errorf("the question (%d) should come before the outcome (%d):\n%s", ask, deny, stderr)
	}
}

// A task whose last patch failed exits 1 and says so; "Running" comes after
// the --yes answer is printed.
func TestRunFailedPatchExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "junk", ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "junk", ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "esc", Name: "shell", Args: `{"command":["rm","-rf","junk"]}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "bad", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: greet.txt\n@@\n-goodbye\n+hello, world\n*** End Patch\n"}`}}},
		modeltest.Turn{Text: "I changed the greeting."},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, dir, "--yes", "greet")
	if code != 1 {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"patch failed, nothing changed:", "greet.txt", "last patch failed", "› Running rm -rf junk (sandboxed)\n  exit "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(data) != "hello\n" {
		t.Errorf("greet.txt = %q", data)
	}
	if ask, run := strings.Index(stderr, "(--yes: "), strings.Index(stderr, "› Running rm -rf junk"); ask < 0 || run < ask {
		t.Errorf("Running (%d) before the question was answered (%d):\n%s", run, ask, stderr)
	}
}
