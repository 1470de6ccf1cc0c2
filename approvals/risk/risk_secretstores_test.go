package risk

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox"
)

// TestSecretsFromProgramsAndFiles: password managers, cloud CLIs that print
// tokens, cluster secrets, other processes' environments and files named
// for the secrets they hold are read secrets; the twins only list, describe
// or change.
func TestSecretsFromProgramsAndFiles(t *testing.T) {
	ctx := looseContext(t)
	sh := func(s string) []string { return []string{"bash", "-lc", s} }
	checkRisk(t, ctx, []riskCase{
		{[]string{"pass", "show", "work/github"}, High, "reads secrets: the password store (pass show)", ""},
		{[]string{"pass", "work/github"}, High, "the password store", ""},
		{[]string{"gopass", "cat", "db"}, High, "the password store", ""},
		{[]string{"op", "read", "op://vault/item/password"}, High, "1Password", ""},
		{[]string{"op", "item", "get", "GitHub", "--reveal"}, High, "1Password", ""},
		{[]string{"bw", "get", "password", "github"}, High, "Bitwarden", ""},
		{[]string{"security", "find-generic-password", "-s", "x", "-w"}, High, "the keychain", ""},
		{[]string{"secret-tool", "lookup", "service", "x"}, High, "the keyring", ""},
		{[]string{"vault", "kv", "get", "secret/app"}, High, "Vault", ""},
		{[]string{"aws", "configure", "get", "aws_secret_access_key"}, High, "the AWS credentials", ""},
		{[]string{"aws", "--profile", "prod", "secretsmanager", "get-secret-value", "--secret-id", "db"}, High, "AWS credentials", ""},
		{[]string{"aws", "ssm", "get-parameter", "--name", "p", "--with-decryption"}, High, "AWS parameters", ""},
		{[]string{"aws", "ecr", "get-login-password"}, High, "AWS credentials", ""},
		{[]string{"gcloud", "auth", "print-access-token"}, High, "Google Cloud credentials", ""},
		{[]string{"gcloud", "secrets", "versions", "access", "latest", "--secret", "db"}, High, "Google Cloud credentials", ""},
		{[]string{"az", "account", "get-access-token"}, High, "Azure credentials", ""},
		{[]string{"kubectl", "get", "secret", "db", "-o", "yaml"}, High, "Kubernetes secrets (kubectl get secret)", ""},
		{[]string{"kubectl", "-n", "prod", "get", "secrets", "-ojson"}, High, "Kubernetes secrets", ""},
		{[]string{"gh", "auth", "status", "--show-token"}, High, "the GitHub token", ""},
		{sh("echo url=https://github.com | git credential fill"), High, "git's stored credentials", ""},
		{[]string{"docker-credential-desktop", "get"}, High, "registry credentials", ""},
		{[]string{"ps", "eww"}, High, "other processes' environments", ""},
		{[]string{"ps", "auxe"}, High, "other processes' environments", ""},
		{[]string{"cat", "secrets.yaml"}, High, "reads secrets: secrets.yaml", ""},
		{[]string{"cat", "config/.secrets.toml"}, High, ".secrets.toml", ""},
		{[]string{"cat", "terraform.tfstate"}, High, "terraform.tfstate", ""},
		{[]string{"jq", ".", "client_secret_1234.apps.googleusercontent.com.json"}, High, "client_secret", ""},
		{[]string{"cat", "credentials.json"}, High, "credentials.json", ""},
		{[]string{"cat", "~/.cargo/credentials.toml"}, High, "~/.cargo/credentials.toml", ""},
		{[]string{"cat", "~/.vault-token"}, High, "~/.vault-token", ""},
		{[]string{"cat", "~/.s3cfg"}, High, "~/.s3cfg", ""},
		// twins
		{[]string{"pass"}, Low, "", "secrets"},
		{[]string{"pass", "ls", "work"}, Low, "", "secrets"},
		{[]string{"pass", "insert", "work/new"}, Low, "", "secrets"},
		{[]string{"op", "item", "list"}, Low, "", "secrets"},
		{[]string{"security", "find-generic-password", "-s", "x"}, Low, "", "secrets"},
		{[]string{"aws", "configure", "get", "region"}, Low, "", "secrets"},
		{[]string{"aws", "ssm", "get-parameter", "--name", "p"}, Low, "", "secrets"},
		{[]string{"kubectl", "get", "secrets"}, Low, "", "secrets"},
		{[]string{"kubectl", "get", "secrets", "-o", "name"}, Low, "", "secrets"},
		{[]string{"kubectl", "describe", "secret", "db"}, Low, "", "secrets"},
		{[]string{"kubectl", "get", "pods", "-o", "yaml"}, Low, "", "secrets"},
		{[]string{"gh", "auth", "status"}, Medium, "contacts github.com", "secrets"},
		{[]string{"ps", "aux"}, Low, "", "secrets"},
		{[]string{"ps", "-ef"}, Low, "", "secrets"},
		{sh("echo $GITHUB_TOKEN"), Low, "", "secrets"}, // filtered out of every command's environment
		{[]string{"cat", "secrets.example.yaml"}, Low, "", "secrets"},
		{[]string{"cat", "docs/secrets.md"}, Low, "", "secrets"},
		{[]string{"terraform", "plan"}, Low, "", "secrets"},
	})
}

// TestSecretsTheSandboxHides: every credential store the sandbox hides by
// default (sandbox.BuiltinReadDeny: browser profiles, keychains, other
// agents' tokens...) is a secret to the analyser too, so reading one is
// high risk and asked under every policy; the twins list a profile or read
// configuration beside the stores.
func TestSecretsTheSandboxHides(t *testing.T) {
	ctx := looseContext(t)
	home := ctx.Home
	var cases []riskCase
	for _, e := range sandbox.BuiltinReadDeny {
		p := home + "/" + strings.ReplaceAll(e, "*", ".toml")
		cases = append(cases, riskCase{[]string{"cat", p}, High, "reads secrets", ""})
		cases = append(cases, riskCase{[]string{"cat", p + "/Default/Login Data"}, High, "reads secrets", ""})
	}
	cases = append(cases,
		riskCase{[]string{"ls", home + "/.mozilla/firefox"}, Low, "", "secrets"},
		riskCase{[]string{"cat", home + "/.config/git/config"}, Low, "", "secrets"},
		riskCase{[]string{"cat", home + "/.config/Code/User/settings.json"}, Low, "", "secrets"},
		riskCase{[]string{"cat", home + "/Library/Application Support/Code/User/settings.json"}, Low, "", "secrets"},
	)
	checkRisk(t, ctx, cases)
}

// TestSecretsWrittenNotRead: a key or certificate a command generates is
// written, not read (`openssl req -newkey … -keyout key.pem`, `ssh-keygen
// -f deploy_key`): no "reads secrets", while printing one still is.
func TestSecretsWrittenNotRead(t *testing.T) {
	ctx := looseContext(t)
	home := ctx.Home
	checkRisk(t, ctx, []riskCase{
		{[]string{"openssl", "req", "-x509", "-newkey", "rsa:2048", "-keyout", "key.pem", "-out", "cert.pem", "-days", "1", "-nodes", "-subj", "/CN=localhost"}, Low, "", "secrets"},
		{[]string{"openssl", "genpkey", "-algorithm", "ed25519", "-out", "key.pem"}, Low, "", "secrets"},
		{[]string{"ssh-keygen", "-t", "ed25519", "-f", "deploy_key", "-N", ""}, Low, "", "secrets"},
		{[]string{"mkcert", "-cert-file", "c.pem", "-key-file", "k.pem", "localhost"}, Low, "", "secrets"},
		// still reads
		{[]string{"openssl", "rsa", "-in", "server.key", "-text"}, High, "reads secrets: server.key", ""},
		{[]string{"openssl", "pkey", "-in", "key.pem", "-out", "/tmp/k.pem"}, High, "reads secrets: key.pem", ""},
		{[]string{"ssh-keygen", "-y", "-f", home + "/.ssh/id_ed25519"}, High, "reads secrets", ""},
	})
}
