package risk

import (
	"slices"
	"strings"
)

// Credentials also come out of programs: password managers, cloud CLIs
// that print tokens, cluster secrets, other processes' environments. What
// such a command prints lands in the agent's context, so it reads secrets
// as much as `cat .env` does. (`echo $GITHUB_TOKEN` is not one: every
// command starts with the secret variables filtered out of its
// environment, see sandbox.EnvPolicy.)

// secretStoreRead says what credential prog's command prints, or "".
// ops are its operands (flags removed), args everything.
func secretStoreRead(prog string, args, ops []string) string {
	sub := func(words ...string) bool { return wordsAt(ops, words...) >= 0 }
	switch prog {
	case "pass", "gopass":
		// `pass NAME` and `pass show NAME` decrypt; `pass` alone and the
		// subcommands below only list or change the store.
		if len(ops) == 0 || passKeeps[ops[0]] {
			return ""
		}
		return "the password store (" + prog + " " + ops[0] + ")"
	case "op":
		if sub("read") || sub("inject") || sub("item", "get") || sub("document", "get") {
			return "1Password (op)"
		}
	case "bw":
		if sub("get") || sub("export") {
			return "Bitwarden (bw)"
		}
	case "security":
		if sub("find-generic-password") || sub("find-internet-password") {
			if hasFlag(args, "-w", "-g") {
				return "the keychain (security)"
			}
		}
		if sub("dump-keychain") && hasFlag(args, "-d") || sub("export") {
			return "the keychain (security)"
		}
	case "secret-tool":
		if sub("lookup") {
			return "the keyring (secret-tool lookup)"
		}
	case "keyring":
		if sub("get") {
			return "the keyring (keyring get)"
		}
	case "vault":
		if sub("read") || sub("kv", "get") || sub("print", "token") || sub("token", "create") {
			return "Vault (vault)"
		}
	case "aws":
		switch {
		case sub("configure", "get") && slices.ContainsFunc(ops, isSecretName):
			return "the AWS credentials (aws configure get)"
		case sub("configure", "export-credentials"), sub("secretsmanager", "get-secret-value"),
			sub("sts", "get-session-token"), sub("ecr", "get-login-password"), sub("codeartifact", "get-authorization-token"):
			return "AWS credentials (aws)"
		case (sub("ssm", "get-parameter") || sub("ssm", "get-parameters") || sub("ssm", "get-parameters-by-path")) && hasFlag(args, "--with-decryption"):
			return "AWS parameters (aws ssm --with-decryption)"
		}
	case "gcloud":
		if sub("auth", "print-access-token") || sub("auth", "print-identity-token") ||
			sub("auth", "application-default", "print-access-token") || sub("secrets", "versions", "access") {
			return "Google Cloud credentials (gcloud)"
		}
	case "az":
		if sub("account", "get-access-token") || sub("keyvault", "secret", "show") || sub("keyvault", "secret", "download") {
			return "Azure credentials (az)"
		}
	case "kubectl", "oc":
		// `kubectl get secret NAME -o yaml` prints the values (base64);
		// the default table and `describe` show only names and sizes.
		if at := slices.Index(ops, "get"); at >= 0 && at+1 < len(ops) && isSecretsResource(ops[at+1]) && outputsValues(args) {
			return "Kubernetes secrets (" + prog + " get " + ops[at+1] + ")"
		}
		if sub("view-secret") {
			return "Kubernetes secrets (" + prog + " view-secret)"
		}
	case "gh":
		if sub("auth", "status") && hasFlag(args, "-t", "--show-token") {
			return "the GitHub token (gh auth status --show-token)"
		}
	case "git":
		if sub("credential", "fill") || len(ops) > 1 && strings.HasPrefix(ops[0], "credential-") && ops[1] == "get" {
			return "git's stored credentials (git " + ops[0] + ")"
		}
	case "heroku":
		if sub("auth:token") {
			return "the Heroku token (heroku auth:token)"
		}
	case "gpg", "gpg2":
		if hasFlag(args, "--export-secret-keys", "--export-secret-subkeys", "--export-secret-key") {
			return "private keys (" + prog + " --export-secret-keys)"
		}
		if hasFlag(args, "-d", "--decrypt") {
			return "encrypted data, decrypted (" + prog + " --decrypt)"
		}
	case "sops":
		// sops prints the file decrypted; exec-env and exec-file hand the
		// values to a command.
		if hasFlag(args, "-d", "--decrypt") || len(ops) > 0 && (ops[0] == "decrypt" || ops[0] == "exec-env" || ops[0] == "exec-file") {
			return "secrets decrypted by sops"
		}
	case "ansible-vault":
		if len(ops) > 0 && (ops[0] == "view" || ops[0] == "decrypt") {
			return "an Ansible vault, decrypted (ansible-vault " + ops[0] + ")"
		}
	case "age", "rage":
		if hasFlag(args, "-d", "--decrypt") {
			return "encrypted data, decrypted (" + prog + " --decrypt)"
		}
	case "ps":
		// BSD-style options with e print every process's environment.
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.Contains(args[0], "e") {
			return "other processes' environments (ps " + args[0] + ")"
		}
	}
	if strings.HasPrefix(prog, "docker-credential-") && sub("get") {
		return "registry credentials (" + prog + " get)"
	}
	return ""
}

// wordsAt is where ops hold words in a row, -1 if nowhere: after global
// options' values too (`aws --profile prod secretsmanager
// get-secret-value`).
func wordsAt(ops []string, words ...string) int {
	for i := 0; i+len(words) <= len(ops); i++ {
		if slices.Equal(ops[i:i+len(words)], words) {
			return i
		}
	}
	return -1
}

// passKeeps are the pass/gopass subcommands that print no secret.
var passKeeps = map[string]bool{
	"init": true, "insert": true, "rm": true, "mv": true, "cp": true, "git": true, "ls": true, "list": true,
	"find": true, "search": true, "help": true, "version": true, "edit": true, "sync": true, "setup": true,
}

func isSecretsResource(r string) bool {
	r = strings.ToLower(r)
	r, _, _ = strings.Cut(r, "/")
	return r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret.") || strings.HasPrefix(r, "secrets.")
}

// outputsValues says whether kubectl's -o prints the objects themselves.
func outputsValues(args []string) bool {
	for i, a := range args {
		format := ""
		switch {
		case a == "-o" || a == "--output":
			if i+1 < len(args) {
				format = args[i+1]
			}
		case strings.HasPrefix(a, "-o"):
			format = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		case strings.HasPrefix(a, "--output="):
			format = strings.TrimPrefix(a, "--output=")
		}
		if format != "" && format != "name" && format != "wide" {
			return true
		}
	}
	return false
}
