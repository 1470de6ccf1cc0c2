package sandbox

import (
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
