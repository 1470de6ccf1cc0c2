package sandbox

import (
	"context"
	"testing"
)

func BenchmarkTmpWarm(b *testing.B) {
	ws := b.TempDir()
	KeepSpareHelpers(true)
	defer KeepSpareHelpers(false)
	cmd := Command{Argv: []string{"/bin/true"}, Cwd: ws, Policy: Policy{Mode: WorkspaceWrite, Workspace: []string{ws}}, Helper: testHelper}
	Run(context.Background(), cmd)
	for b.Loop() {
		res, err := Run(context.Background(), cmd)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res.ExitCode)
		}
		RefillSpares()
	}
}
