package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// envFilterSecrets are credentials a command must never see (attacks):
// by name, and by a password inside a URL value.
var envFilterSecrets = []string{
	"PGPASSWORD=pg-secret", "MYSQL_PWD=my-secret", "DOCKER_PASSWORD=dk-secret", "SMTP_PASS=smtp-secret",
	"AWS_ACCESS_KEY_ID=AKIA-secret", "AWS_SECRET_ACCESS_KEY=aws-secret", "AWS_SESSION_TOKEN=sess-secret",
	"AZURE_CLIENT_SECRET=az-secret", "GOOGLE_APPLICATION_CREDENTIALS=/gcp-secret.json", "GH_TOKEN=gh-secret",
	"NPM_TOKEN=npm-secret", "HEROKU_API_KEY=hk-secret", "XAUTHORITY=/x-secret", "DOCKER_AUTH_CONFIG=auth-secret",
	"DATABASE_URL=postgres://app:url-secret@db:5432/app",
}

// envFilterTwins are look-alikes that must reach the command.
var envFilterTwins = []string{
	"LANG=C.UTF-8", "TERM=xterm-256color", "GOPATH=/go-twin", "BYPASS=bypass-twin",
	"GIT_AUTHOR_NAME=author-twin", "DATABASE_HOST=db-twin", "GIT_URL=ssh://git@example.com/r",
}

func envCmd(t *testing.T, ws string, extra ...string) *exec.Cmd {
	cmd := exec.Command(wardenBin(t), append([]string{"exec", "--cwd", ws}, extra...)...)
	cmd.Env = append(slices.Clone(os.Environ()), envFilterSecrets...)
	cmd.Env = append(cmd.Env, envFilterTwins...)
	cmd.Env = append(cmd.Env, "KEEP_ME_PASSWORD=kept-by-config", "HOME="+ws)
	return cmd
}

// TestEnvFilterThroughExec: `warden exec -- env` prints no secret, sandboxed
// or not; PATH, HOME, PWD and the look-alikes survive, and so does a
// variable config's env_keep names.
func TestEnvFilterThroughExec(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	if err := os.MkdirAll(filepath.Join(cfgHome, "warden"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "warden", "config.toml"), []byte("env_keep = [\"keep_me_*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for _, mode := range []string{"workspace-write", "danger-full-access"} {
		stdout, stderr, code := runCmd(t, envCmd(t, ws, "--sandbox", mode, "--yes", "--", "env"))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr)
		}
		lines := strings.Split(stdout, "\n")
		for _, kv := range envFilterSecrets {
			_, v, _ := strings.Cut(kv, "=")
			if strings.Contains(stdout, v) {
				t.Errorf("%s: secret %s reached the command", mode, kv)
			}
		}
		for _, kv := range append(slices.Clone(envFilterTwins), "KEEP_ME_PASSWORD=kept-by-config", "HOME="+ws) {
			if !slices.Contains(lines, kv) {
				t.Errorf("%s: %s was dropped", mode, kv)
			}
		}
		for _, name := range []string{"PATH=", "PWD="} {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, name) }) {
				t.Errorf("%s: %s missing", mode, name)
			}
		}
	}
}

// TestEnvFilterInDoctor: doctor states the rule and what env_keep keeps,
// as text and as JSON.
func TestEnvFilterInDoctor(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	os.MkdirAll(filepath.Join(cfgHome, "warden"), 0o700)
	if err := os.WriteFile(filepath.Join(cfgHome, "warden", "config.toml"), []byte("env_keep = [\"PGPASSWORD\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runWarden(t, "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"*PASSWORD*", "*_PWD", "*CREDENTIAL*", "*AUTH*", "user:password@", "env_keep (config.toml) keeps: PGPASSWORD"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor text lacks %q", want)
		}
	}
	stdout, stderr, code = runWarden(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor --json: exit %d: %s", code, stderr)
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Env.Dropped, "*PASSWORD*") || !slices.Equal(rep.Env.Keep, []string{"PGPASSWORD"}) || rep.Env.DroppedValues == "" {
		t.Errorf("doctor --json environment: %+v", rep.Env)
	}
}
