package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorNamesRulesNotApplied: `warden doctor` names each allow rule it
// would not apply for a workspace at the current directory, and why: one
// from a trusted project's rules file that a sandboxed command can rewrite
// (the project lies in /tmp, a writable root, above the workspace), and
// one whose grant would go to a program named by a relative path. The
// twins, a plain allow rule and a grant rule for a program outside the
// roots, are not named.
func TestDoctorNamesRulesNotApplied(t *testing.T) {
	home := dirOutsideWritableRoots(t)
	granted := filepath.Join(home, "granted")
	os.Mkdir(granted, 0o755)
	project := t.TempDir() // under /tmp
	ws := filepath.Join(project, "sub")
	os.MkdirAll(ws, 0o755)
	writeWardenRules(t, project, `prefix_rule(pattern=["curl"], decision="allow")`+"\n")
	writeConfig(t, home, fmt.Sprintf("trusted_workspaces = [%q]\n", project))
	userRules := filepath.Join(home, "config", "warden", "rules")
	os.MkdirAll(userRules, 0o755)
	os.WriteFile(filepath.Join(userRules, "mine.rules"), []byte(fmt.Sprintf(`prefix_rule(pattern=["make"], decision="allow")
prefix_rule(pattern=["./stash"], decision="allow", additional_permissions={"write": [%q]})
prefix_rule(pattern=["sh"], decision="allow", additional_permissions={"write": [%q]})
`, granted, granted)), 0o644)

	cmd := exec.Command(wardenBin(t), "doctor", "--json")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "HOME="+home)
	stdout, stderr, code := runCmd(t, cmd)
	var rep struct {
		Rules doctorRules `json:"rules"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Fatalf("doctor --json: exit %d %s %s", code, stdout, stderr)
	}
	why := map[string]string{}
	for _, n := range rep.Rules.NotApplied {
		why[n.Rule] = n.Why
	}
	if w := why[`prefix_rule ["curl"]`]; !strings.Contains(w, "lies in the writable root") {
		t.Errorf("the project's rule from a rewritable file: %q (all: %+v)", w, rep.Rules)
	}
	if w := why[`prefix_rule ["./stash"]`]; !strings.Contains(w, "carries additional permissions") || !strings.Contains(w, "relative path") {
		t.Errorf("the grant rule for ./stash: %q (all: %+v)", w, rep.Rules)
	}
	for _, twin := range []string{`prefix_rule ["make"]`, `prefix_rule ["sh"]`} {
		if w, ok := why[twin]; ok {
			t.Errorf("twin %s named as not applied: %s", twin, w)
		}
	}
	cmd = exec.Command(wardenBin(t), "doctor")
	cmd.Dir, cmd.Env = ws, append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "HOME="+home)
	if text, _, _ := runCmd(t, cmd); !strings.Contains(text, `NOT applied: prefix_rule ["./stash"]`) {
		t.Errorf("the text report does not name the rule:\n%s", text)
	}
}
