package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/sandbox/linux"
)

// A spare builds its Landlock ruleset ahead for the default read policy
// only: a restricted read policy run on that spare still gets a ruleset of
// its own (attack: reading outside the readable roots fails), its readable
// paths stay readable (twin), and a default run on the next spare uses the
// prepared ruleset with reads, the workspace's writes and nothing else.
func TestSpareLandlockRulesetIsForTheDefaultReadsOnly(t *testing.T) {
	if linux.Probe().LandlockABI < 1 {
		t.Skip("no Landlock")
	}
	withSpares(t)
	h := newReadHome(t)
	for rel, content := range map[string]string{"notes/plain.txt": "plain notes\n", "other/data.txt": "DATA-CONTENT\n"} {
		p := filepath.Join(h.home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	outside := t.TempDir()
	def := h.policy()
	restricted := h.policy()
	restricted.Reads.Access = ReadRestricted
	restricted.Reads.ReadableRoots = []string{filepath.Join(h.home, "notes")}

	onSpare := func(script string, p Policy) Result {
		t.Helper()
		spares.settle()
		before := sparesTaken.Load()
		res := h.mustRun(t, script, p)
		if sparesTaken.Load() != before+1 {
			t.Fatalf("%q did not run on the spare", script)
		}
		return res
	}
	h.mustRun(t, "true", def) // starts the spare

	if res := onSpare(`cat "$HOME/other/data.txt"`, restricted); res.ExitCode == 0 {
		t.Errorf("restricted reads on a spare read outside the readable roots: %q", res.Output)
	}
	if res := onSpare(`grep -q plain "$HOME/notes/plain.txt" && ls /usr/bin >/dev/null`, restricted); res.ExitCode != 0 {
		t.Errorf("restricted twin on a spare failed: %q", res.Output)
	}
	if res := onSpare(`grep -q DATA-CONTENT "$HOME/other/data.txt" && echo ok > made && cat made`, def); res.ExitCode != 0 {
		t.Errorf("default reads on a spare failed: %q", res.Output)
	}
	if res := onSpare(`echo x > "`+outside+`/escaped"`, def); res.ExitCode == 0 {
		t.Errorf("a write outside the roots worked on a spare with the prepared ruleset")
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Error("the file outside the roots exists")
	}
}
