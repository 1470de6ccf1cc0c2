package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox"
)

// On Ubuntu's AppArmor restriction doctor names the profile and prints the
// commands that install it for this binary's real path; the profile it
// prints is the one the repository ships.
func TestDoctorFallbackNamesTheAppArmorProfile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "kernel"), 0o755)
	os.WriteFile(filepath.Join(proc, "kernel", "apparmor_restrict_unprivileged_userns"), []byte("1\n"), 0o644)
	defer func(old string) { procSys = old }(procSys)
	procSys = proc

	f := fallbackReport(sandbox.Report{Mechanism: "linux-landlock", Namespaces: map[string]string{"user": "operation not permitted"}})
	if f == nil || f.Cause != "apparmor" || len(f.Commands) != 2 {
		t.Fatalf("fallback report: %+v", f)
	}
	exe := wardenRealPath()
	if !strings.Contains(f.Commands[0], `profile warden "`+exe+`" flags=(unconfined) {`) || !strings.HasPrefix(f.Commands[0], "sudo tee /etc/apparmor.d/warden") ||
		f.Commands[1] != "sudo apparmor_parser -r /etc/apparmor.d/warden" {
		t.Errorf("commands:\n%s", strings.Join(f.Commands, "\n"))
	}
	var out bytes.Buffer
	printFallback(&out, f)
	if !strings.Contains(out.String(), "\nEOF\nsudo apparmor_parser") || !strings.Contains(out.String(), "AppArmor") {
		t.Errorf("printed:\n%s", out.String())
	}

	shipped, err := os.ReadFile("../../scripts/apparmor/warden")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(shipped), "\n") {
		if len(body) == 0 && (strings.HasPrefix(l, "#") || l == "") {
			continue // the header
		}
		body = append(body, l)
	}
	if strings.Join(body, "\n") != apparmorProfile {
		t.Errorf("scripts/apparmor/warden and the profile doctor prints differ:\n%s\n---\n%s", strings.Join(body, "\n"), apparmorProfile)
	}

	// The twin: where namespaces work, no fallback is reported.
	if f := fallbackReport(sandbox.Report{Mechanism: "linux", Namespaces: map[string]string{"user": ""}}); f != nil {
		t.Errorf("fallback reported with namespaces: %+v", f)
	}
}

func TestAppArmorQuote(t *testing.T) {
	if got := apparmorQuote(`/opt/my tools/warden[1]"x`); got != `/opt/my tools/warden\[1\]\"x` {
		t.Errorf("quoted: %s", got)
	}
}
