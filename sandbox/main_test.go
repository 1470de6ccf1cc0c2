package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testHelper is the warden binary the tests use as the sandbox helper:
// $WARDEN_BIN when make set it, else one built here without cgo (the
// helper must be a static binary; a -race test binary is not).
var testHelper string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	// What the sandbox moves away goes to the state directory: never the
	// user's.
	// (A re-run as another user, which may not write $TMPDIR, has its own
	// HOME.)
	if state, err := os.MkdirTemp("", "warden-sandbox-state-"); err == nil {
		defer os.RemoveAll(state)
		os.Setenv("XDG_STATE_HOME", state)
	}
	testHelper = os.Getenv("WARDEN_BIN")
	if testHelper == "" {
		dir, err := os.MkdirTemp("", "warden-sandbox-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		testHelper = filepath.Join(dir, "warden")
		build := exec.Command("go", "build", "-o", testHelper, "github.com/wardenhq/warden/cmd/warden")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build warden for the sandbox helper: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}
