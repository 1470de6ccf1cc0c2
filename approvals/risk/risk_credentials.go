package risk

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/lazyre"
)

// Credentials written into a command line end up in the process list, the
// shell history, the audit log and, if the user chose "Always allow", in a
// rules file. credentialWords finds them word by word; the assessor turns
// each into a risk fact that never repeats the secret, and amendment never
// offers to remember a prefix that holds one.

var (
	// authHeader matches a header that carries a credential.
	authHeader = lazyre.New(`(?i)\b(proxy-)?(authorization|x-api-key|api-key|private-token|x-auth-token|cookie)\s*:`)
	// credentialFlag matches an option whose value is a credential.
	credentialFlag = lazyre.New(`(?i)^--?(password|passwd|pass|token|api-?key|access-?token|auth-?token|secret|client-?secret)(=|$)`)
	// runtimeSecret matches a command substitution that extracts a
	// credential: `$(grep TOKEN .env | cut -d= -f2)`.
	runtimeSecret = lazyre.New("(\\$\\(|`)\\s*(grep|rg|awk|sed|cut|jq|yq|cat|head|tail|pass|op|security|gh\\s+auth)\\b[^)`]*")
	// settingName is the name side of NAME=VALUE in a word: an
	// environment variable or a configuration key (`//registry.npmjs.org/:_authToken`).
	settingName = lazyre.New(`^(?:[A-Za-z_][A-Za-z0-9_.-]*|//[^=\s]+:_[A-Za-z]+)$`)
)

// tokenShapes are the formats of widely used API tokens: a word holding
// one carries a credential whatever the program. Each needs one of its
// literals, which most words lack, before its pattern runs.
var tokenShapes = []struct {
	literals []string
	what     string
	re       func() *regexp.Regexp
}{
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, "a GitHub token", lazyre.New(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},
	{[]string{"github_pat_"}, "a GitHub token", lazyre.New(`\bgithub_pat_[A-Za-z0-9_]{40,}`)},
	{[]string{"glpat-"}, "a GitLab token", lazyre.New(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{[]string{"sk-ant-"}, "an Anthropic API key", lazyre.New(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{[]string{"sk-"}, "an OpenAI API key", lazyre.New(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_]{20,}`)},
	{[]string{"xox"}, "a Slack token", lazyre.New(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{[]string{"AKIA", "ASIA"}, "an AWS access key", lazyre.New(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},
	{[]string{"npm_"}, "an npm token", lazyre.New(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{[]string{"pypi-"}, "a PyPI token", lazyre.New(`\bpypi-[A-Za-z0-9_-]{40,}`)},
	{[]string{"AIza"}, "a Google API key", lazyre.New(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{[]string{"_live_"}, "a Stripe secret key", lazyre.New(`\b[rs]k_live_[0-9A-Za-z]{20,}`)},
	{[]string{"hf_"}, "a Hugging Face token", lazyre.New(`\bhf_[A-Za-z0-9]{30,}\b`)},
	{[]string{"eyJ"}, "a JSON Web Token", lazyre.New(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{[]string{"PRIVATE KEY"}, "a private key", lazyre.New(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
}

// tokenShape names the kind of token word holds, or "".
func tokenShape(word string) string {
	for _, t := range tokenShapes {
		for _, lit := range t.literals {
			if strings.Contains(word, lit) {
				if t.re().MatchString(word) {
					return t.what
				}
				break
			}
		}
	}
	return ""
}

// credentialWord is one word of a command that holds a credential.
type credentialWord struct {
	index int    // in args
	what  string // how the fact names it, never the secret itself
}

// credentialWords finds the words of prog's arguments that hold a
// credential: a token by its format, a setting whose name says it is a
// secret, a password option's value, a header, a URL's password or secret
// query parameter.
func credentialWords(prog string, args []string) []credentialWord {
	var out []credentialWord
	add := func(i int, what string) { out = append(out, credentialWord{i, what}) }
	next := func(i int, what string) {
		if i+1 < len(args) {
			add(i+1, what)
		}
	}
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		switch {
		case strings.Contains(a, ":") && authHeader().MatchString(a):
			name, _, _ := strings.Cut(strings.Trim(a, `"' `), ":")
			add(i, strings.TrimSpace(name)+" header")
		case strings.HasPrefix(a, "-") && credentialFlag().MatchString(a):
			flag, value, attached := strings.Cut(a, "=")
			if attached && value != "" {
				add(i, flag)
			} else {
				next(i, flag)
			}
		case (a == "-u" || a == "--user") && i+1 < len(args) && strings.Contains(args[i+1], ":") && isFetcher(prog):
			user, _, _ := strings.Cut(args[i+1], ":")
			add(i+1, a+" "+user+":***")
		case strings.HasPrefix(a, "-u") && len(a) > 2 && strings.Contains(a, ":") && isFetcher(prog):
			user, _, _ := strings.Cut(a[2:], ":")
			add(i, "-u "+user+":***")
		}
		if what := tokenShape(a); what != "" {
			add(i, what)
		}
		if name, ok := secretSetting(settingOf(a)); ok {
			add(i, name+"=***")
		}
		if strings.Contains(a, "://") {
			if what := urlCredential(urlOf(a)); what != "" {
				add(i, what)
			}
		}
		if what := programCredential(prog, args, i, prev); what != "" {
			add(i, what)
		}
	}
	return out
}

// settingOf is the NAME=VALUE part of a word: the word itself, or the
// value of an option that takes one (`--build-arg=NPM_TOKEN=x`,
// `--from-literal=password=x`).
func settingOf(word string) string {
	if strings.HasPrefix(word, "-") {
		if _, v, ok := strings.Cut(word, "="); ok {
			return v
		}
	}
	return word
}

// secretSetting says whether word is NAME=VALUE where the name is a
// credential's and the value is written out: not empty, not a flag value
// such as 0 or true, not a variable or a command substitution, not the
// path of a file that holds it (GOOGLE_APPLICATION_CREDENTIALS=./sa.json).
func secretSetting(word string) (name string, ok bool) {
	name, value, found := strings.Cut(word, "=")
	if !found || !strings.ContainsAny(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") || !settingName().MatchString(name) {
		return "", false
	}
	return name, isSecretName(name) && writtenOut(value) && !isPathValue(value)
}

// isPathValue says whether a setting's value names a file.
func isPathValue(value string) bool {
	value = strings.Trim(value, `"'`)
	return strings.HasPrefix(value, "/") || strings.HasPrefix(value, "./") || strings.HasPrefix(value, "../") || strings.HasPrefix(value, "~/")
}

// writtenOut says whether a setting's value is a literal that could be a
// secret.
func writtenOut(value string) bool {
	value = strings.Trim(value, `"'`)
	if value == "" || strings.HasPrefix(value, "$") || strings.HasPrefix(value, "`") {
		return false
	}
	switch strings.ToLower(value) {
	case "0", "1", "true", "false", "yes", "no", "on", "off", "none", "null", "nil", "-", "***":
		return false
	}
	return true
}

// isSecretName says whether a variable or key names a credential:
// GITHUB_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, PGPASSWORD,
// npmAuthToken, //registry.npmjs.org/:_authToken, api_key, password. Not
// TOKENIZERS_PARALLELISM, SSH_AUTH_SOCK, BYPASS or GIT_ASKPASS.
func isSecretName(name string) bool {
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == ':' || r == '/' }) {
		if secretNameParts(nameParts(part)) {
			return true
		}
	}
	return false
}

func secretNameParts(parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	last := parts[len(parts)-1]
	switch last {
	case "token", "secret", "password", "passwd", "pass", "passphrase", "apikey", "credential", "credentials", "auth":
		return true
	case "pwd":
		return len(parts) > 1 // MYSQL_PWD, not the shell's PWD
	case "key":
		if len(parts) > 1 {
			switch parts[len(parts)-2] {
			case "api", "access", "secret", "private", "signing", "encryption", "master":
				return true
			}
		}
	}
	return strings.HasSuffix(last, "password") || strings.HasSuffix(last, "passwd") || strings.HasSuffix(last, "token") && len(parts) == 1
}

// nameParts splits a name at _ and - and where lower case turns to upper
// case, in lower case: npmAuthToken → npm auth token.
func nameParts(name string) []string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case r == '_' || r == '-':
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur.WriteRune(r)
		default:
			cur.WriteRune(r)
		}
		prev = r
	}
	flush()
	return parts
}

// urlOf is the URL in a word: the word, or a setting's value
// (DATABASE_URL=postgres://…, --url=https://…).
func urlOf(word string) string {
	if i, j := strings.IndexByte(word, '='), strings.Index(word, "://"); i >= 0 && i < j {
		return word[i+1:]
	}
	return word
}

// urlCredential describes the credential a URL carries: a password, or a
// query parameter named like a secret (`?api_key=...`), or "".
func urlCredential(word string) string {
	u, err := url.Parse(strings.Trim(word, `"'`))
	if err != nil || u.Host == "" {
		return ""
	}
	if u.User != nil {
		if pw, has := u.User.Password(); has && writtenOut(pw) {
			return "a password in a URL to " + u.Hostname()
		}
	}
	for key, values := range u.Query() {
		for _, v := range values {
			if isSecretName(key) && writtenOut(v) {
				return key + " in a URL to " + u.Hostname()
			}
		}
	}
	return ""
}

// mysqlClients take their password attached to -p (-p alone prompts).
var mysqlClients = map[string]bool{
	"mysql": true, "mysqldump": true, "mysqladmin": true, "mysqlimport": true, "mysqlshow": true,
	"mysqlcheck": true, "mysqlpump": true, "mariadb": true, "mariadb-dump": true, "mariadb-admin": true,
	"mariadb-import": true, "mariadb-check": true,
}

// registryLogins take a password with -p after `login`.
var registryLogins = map[string]bool{
	"docker": true, "podman": true, "nerdctl": true, "buildah": true, "skopeo": true, "helm": true, "oras": true, "crane": true,
}

// programCredential says what credential args[i] is for prog's own
// password options, or "".
func programCredential(prog string, args []string, i int, prev string) string {
	a := args[i]
	switch {
	case mysqlClients[prog]:
		if strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--") {
			return prog + " -p…"
		}
	case registryLogins[prog]:
		if !slices.Contains(args[:i], "login") {
			return ""
		}
		if prev == "-p" || strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--") {
			return prog + " login -p"
		}
	case prog == "sshpass":
		if prev == "-p" || strings.HasPrefix(a, "-p") && len(a) > 2 {
			return "sshpass -p"
		}
	case prog == "redis-cli" || prog == "valkey-cli":
		if prev == "-a" {
			return prog + " -a"
		}
	case prog == "mongosh" || prog == "mongo" || prog == "mongodump" || prog == "mongorestore":
		if prev == "-p" {
			return prog + " -p"
		}
	case prog == "ldapsearch" || prog == "ldapadd" || prog == "ldapmodify" || prog == "ldapdelete" || prog == "ldapwhoami":
		if prev == "-w" {
			return prog + " -w"
		}
	case prog == "zip" || prog == "unzip":
		if prev == "-P" {
			return prog + " -P"
		}
	case prog == "7z" || prog == "7za" || prog == "7zz":
		if strings.HasPrefix(a, "-p") && len(a) > 2 {
			return prog + " -p"
		}
	case prog == "openssl":
		if (prev == "-passin" || prev == "-passout" || prev == "-pass" || prev == "-k") && strings.HasPrefix(a, "pass:") || prev == "-k" {
			return "openssl " + prev
		}
	case prog == "keytool":
		if strings.HasSuffix(prev, "pass") && strings.HasPrefix(prev, "-") {
			return "keytool " + prev
		}
	case prog == "smbclient":
		if (prev == "-U" || prev == "--user") && strings.Contains(a, "%") || strings.HasPrefix(a, "--user=") && strings.Contains(a, "%") {
			return "smbclient -U user%***"
		}
	case prog == "htpasswd":
		if i == len(args)-1 && i > 0 && batchHtpasswd(args) {
			return "htpasswd -b"
		}
	case prog == "psql" || prog == "pg_dump" || prog == "pg_dumpall" || prog == "pg_restore" || prog == "pg_isready":
		// A connection string: "host=db password=... dbname=app".
		for _, kv := range strings.Fields(a) {
			if name, ok := secretSetting(kv); ok && kv != a {
				return prog + " " + name + "=***"
			}
		}
	case prog == "gh":
		if len(args) > 1 && args[0] == "secret" && args[1] == "set" && (prev == "-b" || prev == "--body" || strings.HasPrefix(a, "--body=") || strings.HasPrefix(a, "-b") && len(a) > 2 && i > 1) {
			return "gh secret set --body"
		}
	case prog == "kubectl" || prog == "oc":
		if len(args) > 1 && args[0] == "create" && args[1] == "secret" && strings.HasPrefix(a, "--from-literal=") {
			return prog + " create secret --from-literal"
		}
	}
	// `aws configure set aws_secret_access_key X`, `npm config set
	// //registry.npmjs.org/:_authToken X`, `poetry config pypi-token.pypi X`.
	if configTools[prog] && setsSecretKey(args, i) {
		from := i - 2
		if from > 0 && args[from-1] == "config" || from > 0 && args[from-1] == "configure" {
			from--
		}
		return prog + " " + strings.Join(args[from:i], " ") + " ***"
	}
	return ""
}

// configTools set configuration with `config set KEY VALUE` (aws:
// `configure set`; poetry: `config KEY VALUE`).
var configTools = map[string]bool{"aws": true, "npm": true, "pnpm": true, "yarn": true, "poetry": true, "pip": true, "pip3": true}

// setsSecretKey says whether args[i] is the value in `… set KEY VALUE`
// (or poetry's `config KEY VALUE`) for a key naming a credential.
func setsSecretKey(args []string, i int) bool {
	if i < 2 || !writtenOut(args[i]) || strings.HasPrefix(args[i-1], "-") || !isSecretName(args[i-1]) {
		return false
	}
	return args[i-2] == "set" || args[i-2] == "config"
}

// batchHtpasswd says whether htpasswd takes its password from the command
// line (-b, alone or in a group such as -bc).
func batchHtpasswd(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "b") {
			return true
		}
	}
	return false
}

// credentialsInArgs flags credentials written into a command's words.
// Facts never repeat the secret.
func (as *Assessor) credentialsInArgs(prog string, args []string) {
	for _, c := range credentialWords(prog, args) {
		switch {
		case strings.HasPrefix(c.what, "a password in a URL"):
			as.Add(Medium, CredentialAccess, "passes "+c.what)
			continue
		case strings.HasSuffix(c.what, ":***"): // -u user:password
			as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a password on the command line (%s)", c.what))
			continue
		}
		as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s)", c.what))
	}
}

// credentialSettings flags the NAME=VALUE words a wrapper such as env
// passes on: `env AWS_SECRET_ACCESS_KEY=… aws s3 ls`.
func (as *Assessor) credentialSettings(words []string) {
	for _, w := range words {
		if name, ok := secretSetting(w); ok {
			as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s=***)", name))
		} else if what := tokenShape(w); what != "" {
			as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s)", what))
		}
	}
}

// credentialAssignments flags shell variables set to a written-out
// credential: `GITHUB_TOKEN=ghp_… gh pr list`, `export OPENAI_API_KEY=sk-…`.
func (as *Assessor) credentialAssignments(assigns []command.Assignment) {
	for _, v := range assigns {
		if v.Literal && isSecretName(v.Name) && writtenOut(v.Value) && !isPathValue(v.Value) {
			as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s=***)", v.Name))
		} else if v.Literal {
			if what := tokenShape(v.Value); what != "" {
				as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s)", what))
			}
			if what := urlCredential(v.Value); strings.HasPrefix(what, "a password") {
				as.Add(Medium, CredentialAccess, "passes "+what)
			} else if what != "" {
				as.Add(Medium, CredentialAccess, fmt.Sprintf("passes a credential on the command line (%s)", what))
			}
		}
	}
}

// carriesCredential says whether any word of argv holds a credential: such
// a command is never offered for "Always allow", which would write the
// secret into a rules file.
func CarriesCredential(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	return len(credentialWords(filepath.Base(argv[0]), argv[1:])) > 0
}

func isFetcher(prog string) bool {
	switch prog {
	case "curl", "wget", "http", "https", "xh", "ftp", "lftp":
		return true
	}
	return false
}

// runtimeCredentials flags command substitutions that pull a credential
// out of a file or a store to use it: `$(grep TOKEN .env)`.
func (as *Assessor) runtimeCredentials(text string) {
	if !strings.Contains(text, "$(") && !strings.Contains(text, "`") {
		return // no substitution for the pattern to find
	}
	for _, m := range runtimeSecret().FindAllString(text, -1) {
		if secretName().MatchString(m) {
			as.Add(Medium, CredentialAccess, "extracts a credential at run time: "+command.EscapeText(strings.TrimSpace(m))+")")
		}
	}
}
