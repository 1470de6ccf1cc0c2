package sandbox

import (
	"path"
	"slices"
	"testing"
)

func TestEnvPolicy(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/root", "OPENAI_API_KEY=sk", "GITHUB_TOKEN=gh", "aws_secret_access_key=x", "EDITOR=vi", "GOFLAGS=-v"}
	cases := []struct {
		name string
		pol  EnvPolicy
		want []string
	}{
		{"default drops secrets", EnvPolicy{}, []string{"EDITOR=vi", "GOFLAGS=-v", "HOME=/root", "PATH=/bin"}},
		{"keep secrets", EnvPolicy{KeepSecrets: true}, []string{"EDITOR=vi", "GITHUB_TOKEN=gh", "GOFLAGS=-v", "HOME=/root", "OPENAI_API_KEY=sk", "PATH=/bin", "aws_secret_access_key=x"}},
		{"keep one, case-insensitively", EnvPolicy{Keep: []string{"github_token"}}, []string{"EDITOR=vi", "GITHUB_TOKEN=gh", "GOFLAGS=-v", "HOME=/root", "PATH=/bin"}},
		{"core", EnvPolicy{Inherit: InheritCore}, []string{"HOME=/root", "PATH=/bin"}},
		{"none plus set", EnvPolicy{Inherit: InheritNone, Set: map[string]string{"A": "1"}}, []string{"A=1"}},
		{"exclude glob", EnvPolicy{Exclude: []string{"go*"}}, []string{"EDITOR=vi", "HOME=/root", "PATH=/bin"}},
		{"keep does not undo exclude", EnvPolicy{Keep: []string{"GOFLAGS"}, Exclude: []string{"GOFLAGS"}}, []string{"EDITOR=vi", "HOME=/root", "PATH=/bin"}},
		{"include only", EnvPolicy{IncludeOnly: []string{"PATH", "HOME"}, Set: map[string]string{"X": "y"}}, []string{"HOME=/root", "PATH=/bin"}},
	}
	for _, c := range cases {
		if got := c.pol.Build(base); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v want %v", c.name, got, c.want)
		}
	}
}

// TestEnvFilterSecrets: credentials by name or by value are dropped (the
// attacks), look-alikes that carry none survive (the twins).
func TestEnvFilterSecrets(t *testing.T) {
	secret := []string{
		"PGPASSWORD=p", "MYSQL_PWD=p", "DOCKER_PASSWORD=p", "REDIS_PASSWD=p", "SMTP_PASS=p", "PASS=p", "DB_PASS_FILE=/run/p",
		"SSH_PASSPHRASE=p", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "AWS_SHARED_CREDENTIALS_FILE=/c",
		"AWS_ACCESS_KEY_ID=AKIA", "AWS_SECRET_ACCESS_KEY=s", "AWS_SESSION_TOKEN=t", "AZURE_CLIENT_SECRET=s",
		"ARM_CLIENT_SECRET=s", "DIGITALOCEAN_ACCESS_TOKEN=t", "HEROKU_API_KEY=k", "GITHUB_TOKEN=t", "GH_TOKEN=t",
		"NPM_TOKEN=t", "HF_TOKEN=t", "DOCKER_AUTH_CONFIG={}", "OAUTH_CLIENT=x", "XAUTHORITY=/home/u/.Xauthority",
		"SESSION_COOKIE=c", "CI_JOB_JWT=j", "API_BEARER=b", "AZURE_STORAGE_CONNECTION_STRING=AccountKey=x", "SENTRY_DSN=https://k@s.io/1",
		"pgpassword=lower",
		"DATABASE_URL=postgres://u:p@db:5432/app", "HTTP_PROXY=http://me:pw@proxy:3128", "REDIS_URL=redis://:pw@r:6379",
		"PIP_INDEX_URL=https://__token__:x@pypi.example/simple",
	}
	harmless := []string{
		"PATH=/usr/bin", "HOME=/home/u", "PWD=/w", "OLDPWD=/", "LANG=C.UTF-8", "TERM=xterm", "GOPATH=/go",
		"BYPASS=1", "COMPASS_HOME=/c", "PASSIVE=1", "GIT_AUTHOR_NAME=Me", "GIT_AUTHOR_EMAIL=me@x", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
		"DATABASE_HOST=db", "GIT_REMOTE=ssh://git@github.com/a/b", "HTTPS_PROXY=http://proxy:3128", "URL=https://x.org/a:b@c",
		"EMAIL=me@example.com", "DOCS=see http://x.org/", "BOOK_AUTHOR=me",
	}
	var base []string
	base = append(base, secret...)
	base = append(base, harmless...)
	got := EnvPolicy{}.Build(base)
	for _, kv := range secret {
		if slices.Contains(got, kv) {
			t.Errorf("secret %s reached the command", kv)
		}
	}
	for _, kv := range harmless {
		if !slices.Contains(got, kv) {
			t.Errorf("harmless %s was dropped", kv)
		}
	}
	// env_keep brings back what the user names, by name or glob, and
	// nothing else.
	kept := EnvPolicy{Keep: []string{"pgpassword", "DATABASE_*"}}.Build(base)
	for _, kv := range []string{"PGPASSWORD=p", "pgpassword=lower", "DATABASE_URL=postgres://u:p@db:5432/app"} {
		if !slices.Contains(kept, kv) {
			t.Errorf("env_keep did not keep %s", kv)
		}
	}
	if slices.Contains(kept, "MYSQL_PWD=p") {
		t.Error("env_keep kept a variable it does not name")
	}
}

// globMatch agrees with path.Match on the filter's patterns and on names
// that make its shortcuts wrong (a slash, the pattern's word at either end
// or alone, a star alone).
func TestGlobMatchAgreesWithPathMatch(t *testing.T) {
	patterns := slices.Concat(SecretEnvNames, SecretEnvExceptions, []string{"*", "A*", "*A", "**", "A?C", "[AB]*", `A\*`, "*A*B*", "PATH"})
	names := []string{"", "KEY", "MYKEY", "KEYS", "A_KEY_B", "PASS", "BYPASS", "SMTP_PASS", "PASS_FILE", "DB_PASS_FILE", "PWD", "OLDPWD", "MYSQL_PWD",
		"DSN", "SENTRY_DSN", "DSNX", "AUTHOR", "GIT_AUTHOR_NAME", "XAUTHORITY", "SSH_AUTH_SOCK", "A", "AB", "ABC", "A*", "BA", "A/B_TOKEN", "A/KEY", "/", "PATH", "XPATH"}
	for _, p := range patterns {
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := globMatch(p, n); got != want {
				t.Errorf("globMatch(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
	if !IsSecretEnv("DATABASE_URL", "postgres://u:pw@db/x") || IsSecretEnv("REPO", "ssh://git@host/x") || IsSecretEnv("HOME", "/root") {
		t.Error("the value rule changed")
	}
}
