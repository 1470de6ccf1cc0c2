package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Credential stores the user's environment moved out of the home directory
// are hidden where the tools find them; the files beside them stay readable.
func TestReadPolicyHidesSecretsFoundThroughTheEnvironment(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	write := func(rel, content string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	os.MkdirAll(ws, 0o755)
	attacks := []string{
		write("xdg/gh/hosts.yml", secretText),
		write("xdg/gcloud/credentials.db", secretText),
		write("xdg/git/credentials", secretText),
		write("gnupg/private-keys-v1.d/k.key", secretText),
		write("kube/a.yaml", secretText),
		write("kube/b.yaml", secretText),
		write("docker/config.json", secretText),
		write("aws/creds", secretText),
		write("aws/conf", secretText),
		write("pass/site.gpg", secretText),
	}
	twins := []string{
		write("xdg/nvim/init.lua", "-- editor\n"),
		write("docker/daemon.json", "{}\n"),
		write("kube/notes.txt", "not listed\n"),
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("GNUPGHOME", filepath.Join(base, "gnupg"))
	t.Setenv("KUBECONFIG", filepath.Join(base, "kube/a.yaml")+":"+filepath.Join(base, "kube/b.yaml")+":relative.yaml")
	t.Setenv("DOCKER_CONFIG", filepath.Join(base, "docker"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(base, "aws/creds"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(base, "aws/conf"))
	t.Setenv("PASSWORD_STORE_DIR", filepath.Join(base, "pass"))
	pol := inWorkspace(escapePolicy(), ws)
	pol.Reads.Home = filepath.Join(base, "home")
	for _, p := range attacks {
		// A hidden file reads empty; a hidden directory cannot be entered.
		res := run(t, ws, Command{Argv: []string{"cat", p}, Policy: pol})
		if strings.Contains(string(res.Output), secretText) {
			t.Errorf("attack: %s readable: exit %d %q", p, res.ExitCode, res.Output)
		}
		if res.ExitCode != 0 && (!res.SandboxDenied || !strings.Contains(res.DenialReason, "read policy")) {
			t.Errorf("%s: denial not recognised: %+v", p, res.DenialReason)
		}
	}
	for _, p := range twins {
		if res := run(t, ws, Command{Argv: []string{"cat", p}, Policy: pol}); res.ExitCode != 0 {
			t.Errorf("twin: %s unreadable: %s", p, res.Output)
		}
	}
}

func TestEnvSecretsTakeOnlyAbsolutePaths(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "rel/cfg", "GNUPGHOME": "/g", "KUBECONFIG": "/k1::k2:/k3", "DOCKER_CONFIG": "/d"}
	got := envSecrets(func(k string) string { return env[k] })
	if want := []string{"/d/config.json", "/g", "/k1", "/k3"}; !slices.Equal(got, want) {
		t.Errorf("envSecrets = %v, want %v", got, want)
	}
}
