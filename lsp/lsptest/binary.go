package lsptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/testhome"
)

var (
	buildMu  sync.Mutex
	built    = map[string]string{} // build tags → binary
	buildDir string
)

// Binary returns the warden binary under test: $WARDEN_BIN (set by `make
// gotest`), else one built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("WARDEN_BIN"); bin != "" {
		return bin
	}
	return build(t, "")
}

// TestBinary returns a warden binary built with the wardentest tag, which
// adds test-only commands (warden.test.*) and a code action provider that
// exercise jobs, client calls and the document store. It is never shipped.
func TestBinary(t testing.TB) string {
	t.Helper()
	return build(t, "wardentest")
}

func build(t testing.TB, tags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[tags]; ok {
		return bin
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "warden-lsptest-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	bin := filepath.Join(buildDir, "warden"+tags)
	cmd := exec.Command("go", "build", "-tags", tags, "-o", bin, "github.com/wardenhq/warden/cmd/warden")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build warden (tags %q): %v\n%s", tags, err, out)
	}
	built[tags] = bin
	return bin
}

// Main runs a package's tests with HOME and the XDG directories in a
// temporary directory (testhome), so nothing they start writes the user's
// real Warden directories, and removes the binary Binary built. Use it as
// func TestMain(m *testing.M) { lsptest.Main(m) }.
func Main(m *testing.M) {
	cleanup, err := testhome.Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
