package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// PrepareRun's helper serves the run of its kind that follows; a run of
// another kind (network on instead of off) ends it and starts its own, and
// still gets the policy it asked for.
func TestPrepareRunEarlyHelper(t *testing.T) {
	ws := t.TempDir()
	off := Policy{Workspace: []string{ws}, Network: NetworkOff, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	on := off
	on.Network = NetworkOn
	probe := `if [ -n "$` + EnvNetworkDisabled + `" ]; then echo net-off; else echo net-on; fi`

	PrepareRun(off, testHelper)
	res := run(t, ws, Command{Argv: sh(probe), Policy: off})
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "net-off") {
		t.Fatalf("same kind: %+v %s", res, res.Output)
	}
	early.Lock()
	left := early.done != nil || early.h != nil
	early.Unlock()
	if left {
		t.Fatal("the early helper was not taken")
	}

	PrepareRun(off, testHelper)
	res = run(t, ws, Command{Argv: sh(probe + `; cat /proc/net/dev | grep -c :`), Policy: on})
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "net-on") {
		t.Fatalf("other kind: %+v %s", res, res.Output)
	}
	if n := strings.TrimSpace(string(res.Output[strings.LastIndex(string(res.Output[:len(res.Output)-1]), "\n")+1:])); n == "1" {
		t.Errorf("network on ran in a helper without the host's interfaces (only lo): %s", res.Output)
	}
}

// A scan PrepareRun made ahead is what the run that follows at once uses
// (twin); one older than scanAheadFresh when the run starts (after a
// prompt) is made again, so a repository cloned meanwhile is found.
func TestScanAheadRedoneWhenTheRunStartsLate(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	roots := []Root{{Path: ws}}
	_, wait := scanRoots(roots, true)
	wait()
	if err := os.Mkdir(filepath.Join(ws, "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, wait := scanRoots(roots, false)
	wait()
	if len(res[0]) != 0 {
		t.Fatalf("the run at once did not take the scan made ahead: %q", res[0])
	}
	scanCache.Lock()
	for _, r := range scanCache.m {
		if r.ahead {
			r.at = r.at.Add(-scanAheadFresh)
		}
	}
	scanCache.Unlock()
	res, wait = scanRoots(roots, false)
	wait()
	if !slices.Contains(res[0], filepath.Join(ws, "a", ".git")) {
		t.Fatalf("a late run used the old scan made ahead: %q", res[0])
	}
}
