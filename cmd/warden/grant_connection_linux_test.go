package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExecRefusedConnectionDerivesNoDeviceGrant: `make demo`'s network
// step. bash's /dev/tcp connection refused in the sandbox names
// /dev/tcp/HOST/PORT; neither the on-request hint nor the on-failure retry
// offers a write grant to /dev (or any device path) for it. The twin: a
// blocked write outside the roots still derives its directory.
func TestExecRefusedConnectionDerivesNoDeviceGrant(t *testing.T) {
	g := newGrantEnv(t)
	connect := []string{"bash", "-c", "exec 3<>/dev/tcp/1.1.1.1/80 && echo connected"}
	for _, approval := range []string{"on-request", "on-failure"} {
		args := append([]string{"exec", "--cwd", g.ws, "--approval", approval, "--deny", "--"}, connect...)
		stdout, stderr, code := g.warden(t, args...)
		if code == 0 || strings.Contains(stdout, "connected") {
			t.Fatalf("%s: the connection went through: exit %d %s", approval, code, stdout)
		}
		if strings.Contains(stderr, `"/dev`) || strings.Contains(stderr, "write access to /dev") {
			t.Errorf("%s: a refused connection derived a device grant:\n%s", approval, stderr)
		}
	}
	build := g.script(t, "build.sh", `touch "`+g.a+`/built"`)
	_, stderr, _ := g.warden(t, "exec", "--cwd", g.ws, "--approval", "on-request", "--deny", "--", build)
	if !strings.Contains(stderr, `additional_permissions {"write":["`+g.a+`"]}`) {
		t.Errorf("twin: the blocked write derived no grant to %s:\n%s", filepath.Base(g.a), stderr)
	}
}
