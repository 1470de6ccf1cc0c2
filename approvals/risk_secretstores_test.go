package approvals

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
		{[]string{"pass", "show", "work/github"}, RiskHigh, "reads secrets: the password store (pass show)", ""},
		{[]string{"pass", "work/github"}, RiskHigh, "the password store", ""},
		{[]string{"gopass", "cat", "db"}, RiskHigh, "the password store", ""},
		{[]string{"op", "read", "op://vault/item/password"}, RiskHigh, "1Password", ""},
		{[]string{"op", "item", "get", "GitHub", "--reveal"}, RiskHigh, "1Password", ""},
		{[]string{"bw", "get", "password", "github"}, RiskHigh, "Bitwarden", ""},
		{[]string{"security", "find-generic-password", "-s", "x", "-w"}, RiskHigh, "the keychain", ""},
		{[]string{"secret-tool", "lookup", "service", "x"}, RiskHigh, "the keyring", ""},
		{[]string{"vault", "kv", "get", "secret/app"}, RiskHigh, "Vault", ""},
		{[]string{"aws", "configure", "get", "aws_secret_access_key"}, RiskHigh, "the AWS credentials", ""},
		{[]string{"aws", "--profile", "prod", "secretsmanager", "get-secret-value", "--secret-id", "db"}, RiskHigh, "AWS credentials", ""},
		{[]string{"aws", "ssm", "get-parameter", "--name", "p", "--with-decryption"}, RiskHigh, "AWS parameters", ""},
		{[]string{"aws", "ecr", "get-login-password"}, RiskHigh, "AWS credentials", ""},
		{[]string{"gcloud", "auth", "print-access-token"}, RiskHigh, "Google Cloud credentials", ""},
		{[]string{"gcloud", "secrets", "versions", "access", "latest", "--secret", "db"}, RiskHigh, "Google Cloud credentials", ""},
		{[]string{"az", "account", "get-access-token"}, RiskHigh, "Azure credentials", ""},
		{[]string{"kubectl", "get", "secret", "db", "-o", "yaml"}, RiskHigh, "Kubernetes secrets (kubectl get secret)", ""},
		{[]string{"kubectl", "-n", "prod", "get", "secrets", "-ojson"}, RiskHigh, "Kubernetes secrets", ""},
		{[]string{"gh", "auth", "status", "--show-token"}, RiskHigh, "the GitHub token", ""},
		{sh("echo url=https://github.com | git credential fill"), RiskHigh, "git's stored credentials", ""},
		{[]string{"docker-credential-desktop", "get"}, RiskHigh, "registry credentials", ""},
		{[]string{"ps", "eww"}, RiskHigh, "other processes' environments", ""},
		{[]string{"ps", "auxe"}, RiskHigh, "other processes' environments", ""},
		{[]string{"cat", "secrets.yaml"}, RiskHigh, "reads secrets: secrets.yaml", ""},
		{[]string{"cat", "config/.secrets.toml"}, RiskHigh, ".secrets.toml", ""},
		{[]string{"cat", "terraform.tfstate"}, RiskHigh, "terraform.tfstate", ""},
		{[]string{"jq", ".", "client_secret_1234.apps.googleusercontent.com.json"}, RiskHigh, "client_secret", ""},
		{[]string{"cat", "credentials.json"}, RiskHigh, "credentials.json", ""},
		{[]string{"cat", "~/.cargo/credentials.toml"}, RiskHigh, "~/.cargo/credentials.toml", ""},
		{[]string{"cat", "~/.vault-token"}, RiskHigh, "~/.vault-token", ""},
		{[]string{"cat", "~/.s3cfg"}, RiskHigh, "~/.s3cfg", ""},
		// twins
		{[]string{"pass"}, RiskLow, "", "secrets"},
		{[]string{"pass", "ls", "work"}, RiskLow, "", "secrets"},
		{[]string{"pass", "insert", "work/new"}, RiskLow, "", "secrets"},
		{[]string{"op", "item", "list"}, RiskLow, "", "secrets"},
		{[]string{"security", "find-generic-password", "-s", "x"}, RiskLow, "", "secrets"},
		{[]string{"aws", "configure", "get", "region"}, RiskLow, "", "secrets"},
		{[]string{"aws", "ssm", "get-parameter", "--name", "p"}, RiskLow, "", "secrets"},
		{[]string{"kubectl", "get", "secrets"}, RiskLow, "", "secrets"},
		{[]string{"kubectl", "get", "secrets", "-o", "name"}, RiskLow, "", "secrets"},
		{[]string{"kubectl", "describe", "secret", "db"}, RiskLow, "", "secrets"},
		{[]string{"kubectl", "get", "pods", "-o", "yaml"}, RiskLow, "", "secrets"},
		{[]string{"gh", "auth", "status"}, RiskMedium, "contacts github.com", "secrets"},
		{[]string{"ps", "aux"}, RiskLow, "", "secrets"},
		{[]string{"ps", "-ef"}, RiskLow, "", "secrets"},
		{sh("echo $GITHUB_TOKEN"), RiskLow, "", "secrets"}, // filtered out of every command's environment
		{[]string{"cat", "secrets.example.yaml"}, RiskLow, "", "secrets"},
		{[]string{"cat", "docs/secrets.md"}, RiskLow, "", "secrets"},
		{[]string{"terraform", "plan"}, RiskLow, "", "secrets"},
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
		cases = append(cases, riskCase{[]string{"cat", p}, RiskHigh, "reads secrets", ""})
		cases = append(cases, riskCase{[]string{"cat", p + "/Default/Login Data"}, RiskHigh, "reads secrets", ""})
	}
	cases = append(cases,
		riskCase{[]string{"ls", home + "/.mozilla/firefox"}, RiskLow, "", "secrets"},
		riskCase{[]string{"cat", home + "/.config/git/config"}, RiskLow, "", "secrets"},
		riskCase{[]string{"cat", home + "/.config/Code/User/settings.json"}, RiskLow, "", "secrets"},
		riskCase{[]string{"cat", home + "/Library/Application Support/Code/User/settings.json"}, RiskLow, "", "secrets"},
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
		{[]string{"openssl", "req", "-x509", "-newkey", "rsa:2048", "-keyout", "key.pem", "-out", "cert.pem", "-days", "1", "-nodes", "-subj", "/CN=localhost"}, RiskLow, "", "secrets"},
		{[]string{"openssl", "genpkey", "-algorithm", "ed25519", "-out", "key.pem"}, RiskLow, "", "secrets"},
		{[]string{"ssh-keygen", "-t", "ed25519", "-f", "deploy_key", "-N", ""}, RiskLow, "", "secrets"},
		{[]string{"mkcert", "-cert-file", "c.pem", "-key-file", "k.pem", "localhost"}, RiskLow, "", "secrets"},
		// still reads
		{[]string{"openssl", "rsa", "-in", "server.key", "-text"}, RiskHigh, "reads secrets: server.key", ""},
		{[]string{"openssl", "pkey", "-in", "key.pem", "-out", "/tmp/k.pem"}, RiskHigh, "reads secrets: key.pem", ""},
		{[]string{"ssh-keygen", "-y", "-f", home + "/.ssh/id_ed25519"}, RiskHigh, "reads secrets", ""},
	})
}
