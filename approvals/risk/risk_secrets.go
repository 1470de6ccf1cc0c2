package risk

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/lazyre"
	"github.com/wardenhq/warden/sandbox"
)

// CredentialAccess is reading credentials: key files, token stores, the
// environment. Such a command is high risk and never known-safe.
const CredentialAccess Category = "credential_access"

// ---- reads of secrets ----

// reads records a read of target when it names a credential store.
func (as *Assessor) Reads(target string) {
	target = homeVar.Replace(target)
	if !isSecretPath(target) {
		return
	}
	as.readsSecret(as.Display(as.abs(target), false))
}

// readsSecret records a read of a secret, shown as what.
func (as *Assessor) readsSecret(what string) {
	if slices.Contains(as.secrets, what) {
		return
	}
	as.secrets = append(as.secrets, what)
	as.Add(High, CredentialAccess, "reads secrets: "+what)
}

// metadataOnly are programs that look at or change a file's metadata but
// never print its content: naming a secret file to them is no read.
var metadataOnly = map[string]bool{
	"ls": true, "stat": true, "test": true, "[": true, "du": true, "touch": true, "mkdir": true,
	"chmod": true, "chown": true, "chgrp": true, "rm": true, "rmdir": true, "unlink": true,
	"realpath": true, "readlink": true, "basename": true, "dirname": true, "which": true,
	"tee": true, "truncate": true,
}

// scanSecretWords records every secret file named anywhere in the words of
// a command: as an operand, as an option's value (`--file=.env`, `@.env`,
// `if=~/.ssh/id_rsa`) or inside inline code (`open('.env')`), whatever the
// program, so no list of readers can be incomplete.
func (as *Assessor) scanSecretWords(prog string, args []string) {
	if metadataOnly[prog] {
		return
	}
	for _, a := range args {
		if spacedPath(a) {
			as.Reads(a) // `~/Library/Application Support/...` is one path
			continue
		}
		for _, w := range pathWords(a) {
			as.Reads(w)
		}
	}
	if recursiveReader(prog, args) {
		for _, op := range Operands(args) {
			if p := as.abs(homeVar.Replace(op)); p == as.ctx.Home || p == filepath.Join(as.ctx.Home, ".config") {
				as.readsSecret(as.Display(p, true) + " (searched through, credential stores included)")
			}
		}
	}
}

// recursiveReader: a search that reads every file under a directory.
func recursiveReader(prog string, args []string) bool {
	switch prog {
	case "rg", "ag", "ack":
		return true
	case "grep", "egrep", "fgrep":
		for _, a := range args {
			if a == "--recursive" || a == "--dereference-recursive" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, "rR") {
				return true
			}
		}
	}
	return false
}

var homeVar = strings.NewReplacer("${HOME}", "~", "$HOME", "~")

// pathWords splits a word into the path-like runs it holds, with $HOME
// written as ~.
func pathWords(s string) []string {
	s = homeVar.Replace(s)
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-/~*?+%", r)
	})
	out := words[:0]
	for _, w := range words {
		if !strings.HasPrefix(w, "//") { // the rest of a URL, not a file
			out = append(out, w)
		}
	}
	return out
}

// spacedPath says whether a is one path with spaces in it (an absolute,
// home or relative path of path characters and spaces), not words to take
// apart.
func spacedPath(a string) bool {
	if !strings.ContainsRune(a, ' ') || !(strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~/") || strings.HasPrefix(a, "./")) {
		return false
	}
	for _, r := range a {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-/~ ()", r) {
			return false
		}
	}
	return true
}

// secretDirs hold credentials in every file under them.
var secretDirs = map[string]bool{
	".ssh": true, ".gnupg": true, ".aws": true, ".kube": true, ".azure": true, ".password-store": true,
}

// secretFiles are credential files, wherever they are.
var secretFiles = map[string]bool{
	".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true,
	".claude.json": true, ".mcp.json": true, ".credentials.json": true, ".pgpass": true,
	".envrc": true, "shadow": true, "gshadow": true, ".htpasswd": true,
	// Cloud, registry and tool tokens.
	".boto": true, ".s3cfg": true, ".gitcookies": true, ".dockercfg": true, ".vault-token": true,
	".terraformrc": true, "credentials.tfrc.json": true, "credentials.json": true,
	"service-account.json": true, "serviceaccountkey.json": true, "kubeconfig": true,
	// Shell and REPL histories hold the tokens people typed.
	".bash_history": true, ".zsh_history": true, "fish_history": true, ".python_history": true,
	".psql_history": true, ".mysql_history": true, ".node_repl_history": true,
}

// builtinDeny indexes sandbox.BuiltinReadDeny's entries, split into path
// elements, by their first element (never a pattern): the credential
// stores the sandbox hides, browser profiles and keychains among them, are
// what the analyser calls secrets too.
var builtinDeny = func() map[string][][]string {
	out := map[string][][]string{}
	for _, e := range sandbox.BuiltinReadDeny {
		parts := strings.Split(e, "/")
		out[parts[0]] = append(out[parts[0]], parts[1:])
	}
	return out
}()

// hiddenByDefault says whether parts (a path's elements) run through one of
// the sandbox's built-in credential stores, wherever the home directory is.
func hiddenByDefault(parts []string) bool {
	for i, el := range parts {
		for _, rest := range builtinDeny[el] {
			if i+1+len(rest) > len(parts) {
				continue
			}
			match := true
			for j, d := range rest {
				if ok, _ := path.Match(d, parts[i+1+j]); !ok {
					match = false
					break
				}
			}
			if match {
				return true
			}
		}
	}
	return false
}

// envTemplates are .env variants that document variables without values.
var envTemplates = map[string]bool{
	"example": true, "sample": true, "template": true, "tmpl": true, "dist": true, "defaults": true, "schema": true,
}

// isSecretPath recognises files that hold credentials: SSH and GnuPG keys,
// cloud, cluster and registry credentials, token files of tools, .env
// files, private keys, a process's environment. Globs count when they may
// match one (`.env*`, `*.pem`).
func isSecretPath(p string) bool {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return false
	}
	parts := strings.Split(p, "/")
	for i, el := range parts {
		next := ""
		if i+1 < len(parts) {
			next = parts[i+1]
		}
		switch {
		case secretDirs[el]:
			return true
		case el == ".config" && (next == "gh" || next == "gcloud"):
			return true
		case el == ".docker" && (next == "" || next == "config.json"):
			return true
		case el == ".config" && next == "hub",
			el == ".cargo" && (next == "credentials" || next == "credentials.toml"),
			el == ".gem" && next == "credentials",
			el == ".composer" && next == "auth.json",
			el == "composer" && i > 0 && parts[i-1] == ".config" && next == "auth.json":
			return true
		}
	}
	if hiddenByDefault(parts) {
		return true
	}
	base := parts[len(parts)-1]
	if secretFiles[base] || secretFiles[strings.ToLower(base)] || secretDocument(strings.ToLower(base)) {
		return true
	}
	if base == "environ" && strings.Contains(p, "proc/") {
		return true
	}
	// The service account token Kubernetes mounts into every pod (an
	// agent in a dev container on a cluster reads the cluster's keys).
	if strings.Contains(p, "run/secrets/kubernetes.io/") {
		return true
	}
	if base == ".env" || strings.HasPrefix(base, ".env*") {
		return true
	}
	if rest, ok := strings.CutPrefix(base, ".env."); ok {
		return !envTemplates[strings.ToLower(rest)]
	}
	for _, key := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.HasPrefix(base, key) && !strings.HasSuffix(base, ".pub") {
			return true
		}
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".tfstate", ".tfstate.backup", ".kubeconfig"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return true
		}
	}
	return false
}

// secretDocument recognises files named for the secrets they hold:
// secrets.yaml, secret.json, .secrets.toml, client_secret_….json.
func secretDocument(base string) bool {
	if strings.HasPrefix(base, "client_secret") && strings.HasSuffix(base, ".json") {
		return true
	}
	name, ext, ok := strings.Cut(strings.TrimPrefix(base, "."), ".")
	if !ok || name != "secrets" && name != "secret" {
		return false
	}
	switch ext {
	case "yaml", "yml", "json", "toml", "env", "ini", "properties", "txt", "conf", "cfg":
		return true
	}
	return false
}

// ---- the environment ----

// secretName matches variable names and search patterns that stand for
// credentials.
var secretName = lazyre.New(`(?i)token|secret|passw|api_?key|credential|private_?key|auth`)

// environment records commands that print the environment, where agents'
// and users' tokens live: env, printenv, set, export -p, declare -x.
func (as *Assessor) environment(u command.Unwrapped) {
	if len(u.Argv) == 0 {
		if n := len(u.Wrappers); n > 0 && u.Wrappers[n-1] == "env" {
			as.readsSecret("the environment (env)")
		}
		return
	}
	prog, args := filepath.Base(u.Argv[0]), u.Argv[1:]
	ops := Operands(args)
	switch prog {
	case "printenv":
		if len(ops) == 0 {
			as.readsSecret("the environment (printenv)")
		}
		for _, v := range ops {
			if secretName().MatchString(v) {
				as.readsSecret("the environment variable " + v)
			}
		}
	case "set":
		if len(args) == 0 {
			as.readsSecret("the environment (set)")
		}
	case "export", "declare", "typeset":
		if len(ops) == 0 && (len(args) == 0 || hasFlag(args, "-p", "-x", "-px", "-xp")) {
			as.readsSecret("the environment (" + prog + ")")
		}
	}
}

var (
	// inputRedirect is `< FILE` anywhere, including on compound commands
	// (`while read l; do ...; done < .env`), which no segment records.
	inputRedirect = lazyre.New(`(?:^|[^<])<\s*([^\s;&|)<>]+)`)
	// declareDump is `export`, `export -p`, `declare -x`, `typeset -p`...
	// with no names: they print the exported environment.
	declareDump = lazyre.New(`(?m)(?:^|[;&|({]|\bthen|\bdo)\s*(export|declare|typeset)((?:\s+-[a-zA-Z]+)*)\s*(?:$|[;&|)}])`)
)

// scriptReads finds reads a segment does not record: input redirections of
// compound commands and environment dumps by declaration builtins.
func (as *Assessor) scriptReads(text string) {
	// Each pattern needs its literal: most commands compile neither.
	if strings.Contains(text, "<") {
		for _, m := range inputRedirect().FindAllStringSubmatch(text, -1) {
			as.Reads(strings.Trim(m[1], `"'`))
		}
	}
	if !strings.Contains(text, "export") && !strings.Contains(text, "declare") && !strings.Contains(text, "typeset") {
		return
	}
	for _, m := range declareDump().FindAllStringSubmatch(text, -1) {
		if flags := m[2]; m[1] == "export" || strings.ContainsAny(flags, "px") || flags == "" {
			as.readsSecret("the environment (" + m[1] + ")")
		}
	}
}

// readArgs are the words of a command that may name files it reads: all
// but the destination of a copy (written), the words echo prints, a commit
// message, and the pattern or script of grep, rg, sed and awk
// (`echo .env >> .gitignore`, `grep -rn "\.env" src` read no secret).
func readArgs(prog string, args []string) []string {
	switch prog {
	case "echo", "printf":
		return nil
	case "git":
		out := make([]string, 0, len(args))
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-m" || a == "--message":
				i++
			case strings.HasPrefix(a, "-m") || strings.HasPrefix(a, "--message="):
			default:
				out = append(out, a)
			}
		}
		return out
	case "grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "mawk":
		if hasFlag(args, "-e", "-f", "--regexp", "--file", "--expression") || hasFlagPrefix(args, "--regexp=") || hasFlagPrefix(args, "--expression=") {
			return args
		}
		for i, a := range args {
			if a == "--" {
				break
			}
			if !strings.HasPrefix(a, "-") {
				return append(append([]string(nil), args[:i]...), args[i+1:]...)
			}
		}
		return args
	case "find":
		// A name or path pattern selects names; find prints them, it does
		// not read the files (`find . -name '*.pem'`). Start directories
		// and -exec commands stay.
		out := make([]string, 0, len(args))
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname":
				i++
			default:
				out = append(out, args[i])
			}
		}
		return out
	case "openssl", "ssh-keygen", "mkcert":
		// Where a key or certificate is written, not read: `openssl req
		// -newkey … -keyout key.pem -out cert.pem`, `ssh-keygen -f key`.
		generates := prog == "ssh-keygen" && !hasFlag(args, "-y", "-l", "-e", "-p", "-c", "-B") // -f names the new key
		out := make([]string, 0, len(args))
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-out" || a == "-keyout" || a == "-cert-file" || a == "-key-file" || generates && a == "-f":
				i++
			default:
				out = append(out, a)
			}
		}
		return out
	case "cp", "mv", "install", "ln":
		if hasFlag(args, "-t") || hasFlagPrefix(args, "--target-directory") {
			return args
		}
		ops := Operands(args)
		if len(ops) < 2 {
			return args
		}
		dest := ops[len(ops)-1]
		out := make([]string, 0, len(args))
		for i, a := range args {
			if a == dest && i == lastIndex(args, dest) {
				continue
			}
			out = append(out, a)
		}
		return out
	}
	return args
}

func lastIndex(list []string, s string) int {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == s {
			return i
		}
	}
	return -1
}
