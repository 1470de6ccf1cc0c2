package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorSaysWhenThereIsNoConfig: with no config.toml, `warden doctor`
// says "no config.toml: defaults" (and exists false in --json), never the
// path as if it loaded; the twin with a file names it. The default read
// policy (deny-secrets) is said under reads, not listed as something this
// machine cannot enforce.
func TestDoctorSaysWhenThereIsNoConfig(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "config", "warden", "config.toml")
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	doctor := func() string {
		cmd := exec.Command(wardenBin(t), "doctor")
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, env...)
		out, errOut, code := runCmd(t, cmd)
		if code != 0 {
			t.Fatalf("doctor: exit %d %s", code, errOut)
		}
		return out
	}
	out := doctor()
	if c, _ := doctorJSONWith(t, home, env...); c.Exists || !strings.Contains(out, "config: no config.toml ("+file+"): defaults") {
		t.Errorf("no config.toml: exists %v, doctor says:\n%s", c.Exists, out)
	}
	gaps, _, _ := strings.Cut(out[strings.Index(out, "not enforced on this machine:")+1:], "\n\n")
	if strings.Contains(gaps, "read") {
		t.Errorf("the default read policy is listed as not enforced:\n%s", gaps)
	}
	if !strings.Contains(out, "every other file this user can read stays readable to commands") {
		t.Errorf("the reads section does not say what deny-secrets leaves readable:\n%s", out)
	}
	writeFile(t, file, "approval_policy = \"on-request\"\n")
	out = doctor()
	if c, _ := doctorJSONWith(t, home, env...); !c.Exists || !strings.Contains(out, "config: "+file+"\n") {
		t.Errorf("with config.toml: exists %v, doctor says:\n%s", c.Exists, out)
	}
}

// TestDoctorNamesWhereEachSettingCameFrom: `warden doctor` prints a line per
// setting that is not at its default, naming config.toml or the variable,
// and never the API key itself; --json lists the same. A default is not
// listed.
func TestDoctorNamesWhereEachSettingCameFrom(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "config", "warden", "config.toml")
	writeFile(t, file, "sandbox_mode = \"read-only\"\n[model]\nname = \"from-file\"\n")
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"OPENAI_API_KEY=sk-secret-doctor", "OPENAI_BASE_URL=http://127.0.0.1:1/v1"}
	cmd := exec.Command(wardenBin(t), "doctor")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, env...)
	out, errOut, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("doctor: exit %d %s", code, errOut)
	}
	for _, line := range []string{
		`  - sandbox_mode = "read-only" (from config.toml)`,
		`  - model.name = "from-file" (from config.toml)`,
		`  - model.base_url = "http://127.0.0.1:1/v1" (from environment OPENAI_BASE_URL)`,
		`  - model.api_key = (set, not shown) (from environment OPENAI_API_KEY)`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("doctor does not say %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "sk-secret-doctor") || strings.Contains(out, "approval_policy =") {
		t.Errorf("doctor shows the key or a default:\n%s", out)
	}
	if c, _ := doctorJSONWith(t, home, env...); len(c.Settings) != 4 {
		t.Errorf("--json settings: %+v", c.Settings)
	}
}
