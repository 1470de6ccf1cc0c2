package risk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/sandbox"
)

// A deletion inside the recorded workspace says Undo brings it back; a
// file past Undo's copy limit, or a deletion in a writable root Warden does
// not record, says it cannot and is high risk; a temporary directory's is
// named but stays as it was; with recording off nothing is said.
func TestDeletionFactsSayWhatUndoRecovers(t *testing.T) {
	ws, home := riskWorkspace(t, 10)
	extra := filepath.Join(home, "data") // a configured root: not scratch
	os.MkdirAll(extra, 0o755)
	os.WriteFile(filepath.Join(extra, "data.csv"), []byte("1,2\n"), 0o644)
	big := filepath.Join(ws, "big.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 17<<20); err != nil {
		t.Fatal(err)
	}
	scratch, err := os.MkdirTemp("", "risk-undo-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	os.WriteFile(filepath.Join(scratch, "tmp.o"), []byte("o"), 0o644)
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws, extra}}
	assess := func(recorded bool, argv ...string) Risk {
		ctx := Context{Cwd: ws, Sandbox: pol, Home: home}
		if recorded {
			ctx.Recorded = []string{ws}
		}
		return Assess(command.Analyze(argv), ctx)
	}
	for _, c := range []struct {
		argv  []string
		level Level
		fact  string
	}{
		{[]string{"rm", "-rf", "build"}, Medium, "under build/; recoverable with Undo"},
		{[]string{"rm", "notes.txt"}, Medium, "deletes notes.txt (11 bytes); recoverable with Undo"},
		{[]string{"rm", "big.bin"}, High, "Undo cannot bring it back unless it is committed as it is (larger than the 16 MiB Undo copies)"},
		{[]string{"rm", filepath.Join(extra, "data.csv")}, High, "outside the workspace Warden records: Undo cannot bring it back"},
		{[]string{"rm", "-rf", scratch}, Medium, "not recorded (a temporary directory): Undo cannot bring it back"},
	} {
		r := assess(true, c.argv...)
		if r.Level != c.level || !strings.Contains(strings.Join(r.Facts, "\n"), c.fact) {
			t.Errorf("%v: %v %q; want %v and a fact with %q", c.argv, r.Level, r.Facts, c.level, c.fact)
		}
	}
	// Recording off: the facts are as they were.
	if r := assess(false, "rm", "notes.txt"); strings.Contains(strings.Join(r.Facts, "\n"), "Undo") {
		t.Errorf("recording off, yet: %q", r.Facts)
	}
}
