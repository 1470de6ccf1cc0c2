package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"path/filepath"
	"testing"
)

// A patch asks wherever the sandbox holds a path read-only, by the
// sandbox's own answer (sandbox.Policy.HeldBy): with the workspace at the
// home directory, its dot-entries (existing or new: a shell rc file, an
// editor's settings, a .pth file python runs, a new ~/.pythonrc.py); in
// any workspace, a directory on PATH (bin/git, bin not made yet). Twins:
// ordinary files in the home workspace, the entries home_writable allows
// (one part, and a deeper one the sandbox reopens), the rest of a
// workspace with bin on PATH.
func TestEvaluatePatchAsksWhereTheSandboxHoldsReadOnly(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	for _, d := range []string{".config/Code/User", ".local/lib/python3.11/site-packages", "src/app"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(ws, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	o := &Orchestrator{Policy: Policy{Ask: OnRequest}}
	evaluate := func(cwd, path string, homeWritable ...string) *PatchEvaluation {
		sb := Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{cwd}, HomeWritable: homeWritable}
		sb.Reads.Home = home
		return o.EvaluatePatch(PatchRequest{Files: []PatchFile{{Path: path, Change: PatchAdd}}, Cwd: cwd, Sandbox: sb})
	}
	for _, c := range []struct{ cwd, rel string }{
		{home, ".bashrc"}, {home, ".config/Code/User/settings.json"}, {home, ".local/lib/python3.11/site-packages/x.pth"},
		{home, ".pythonrc.py"}, {ws, "bin/git"},
	} {
		e := evaluate(c.cwd, filepath.Join(c.cwd, c.rel))
		if e.Decision != rules.Prompt || len(e.Reasons) != 1 || e.Reasons[0].Kind != ProtectedPath {
			t.Errorf("%s: %v %+v, want a prompt for a protected path", c.rel, e.Decision, e.Reasons)
		}
	}
	for _, c := range []struct {
		cwd, rel     string
		homeWritable []string
	}{
		{home, "notes.txt", nil}, {home, "src/app/main.go", nil}, {ws, "src/main.go", nil}, {ws, "binaries/git", nil},
		{home, ".pythonrc.py", []string{".pythonrc.py"}}, {home, ".config/Code/User/settings.json", []string{".config/Code"}},
	} {
		if e := evaluate(c.cwd, filepath.Join(c.cwd, c.rel), c.homeWritable...); e.Decision != rules.Allow {
			t.Errorf("twin %s (home_writable %q): %v, %s", c.rel, c.homeWritable, e.Decision, e.Reason)
		}
	}
}
