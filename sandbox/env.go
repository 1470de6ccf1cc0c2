package sandbox

import (
	"path"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

// Inherit says which of the parent's variables a command starts from.
type Inherit string

const (
	InheritAll  Inherit = "all"  // every variable (the default)
	InheritCore Inherit = "core" // only HOME LOGNAME PATH SHELL USER USERNAME TMPDIR TEMP TMP LANG LC_ALL TERM
	InheritNone Inherit = "none" // nothing
)

var coreVars = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "TERM"}

// EnvPolicy builds a command's environment, in Codex's order: start from
// Inherit, drop the secrets (unless KeepSecrets or named by Keep), drop
// Exclude, apply Set, then keep only IncludeOnly when it is non-empty.
// Patterns are shell globs over variable names, matched case-insensitively.
type EnvPolicy struct {
	Inherit     Inherit
	KeepSecrets bool
	// Keep names variables that pass the secret filter anyway (config
	// env_keep): the user's way back for a variable the filter misjudges.
	Keep        []string
	Exclude     []string
	Set         map[string]string
	IncludeOnly []string
}

// Build applies the policy to base (KEY=VALUE strings, like os.Environ()).
// The result is sorted so runs are reproducible.
func (e EnvPolicy) Build(base []string) []string {
	vars := map[string]string{}
	switch e.Inherit {
	case InheritNone:
	case InheritCore:
		for _, kv := range base {
			if k, v, ok := strings.Cut(kv, "="); ok && slices.Contains(coreVars, k) {
				vars[k] = v
			}
		}
	default:
		for _, kv := range base {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				vars[k] = v
			}
		}
	}
	for k, v := range vars {
		secret := !e.KeepSecrets && IsSecretEnv(k, v) && !matchAny(e.Keep, k)
		if secret || matchAny(e.Exclude, k) {
			delete(vars, k)
		}
	}
	for k, v := range e.Set {
		vars[k] = v
	}
	if len(e.IncludeOnly) > 0 {
		for k := range vars {
			if !matchAny(e.IncludeOnly, k) {
				delete(vars, k)
			}
		}
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func matchAny(patterns []string, name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range patterns {
		if globMatch(strings.ToUpper(p), upper) {
			return true
		}
	}
	return false
}

// globMatch is path.Match for a name, with the filter's usual shapes (*X*,
// *X, X*, X) done as string tests: every command's environment is matched
// against every pattern, and path.Match was a tenth of a warm start.
func globMatch(pattern, name string) bool {
	if !strings.Contains(name, "/") { // path.Match's * stops at a slash
		inner := strings.TrimSuffix(strings.TrimPrefix(pattern, "*"), "*")
		if !strings.ContainsAny(inner, `*?[\`) {
			lead, trail := strings.HasPrefix(pattern, "*"), len(pattern) > 1 && strings.HasSuffix(pattern, "*")
			switch {
			case pattern == "*":
				return true
			case lead && trail:
				return strings.Contains(name, inner)
			case lead:
				return strings.HasSuffix(name, inner)
			case trail:
				return strings.HasPrefix(name, inner)
			default:
				return name == inner
			}
		}
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// The secret filter: what a command (and, through its output, the model)
// never sees unless the user keeps it with env_keep. Names are matched
// case-insensitively as shell globs.

// SecretEnvNames are the name patterns dropped from every command's
// environment. Cloud providers' variables are covered by them:
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (KEY), AWS_SESSION_TOKEN,
// GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN, DIGITALOCEAN_ACCESS_TOKEN (TOKEN),
// AZURE_CLIENT_SECRET, ARM_CLIENT_SECRET (SECRET), HEROKU_API_KEY (KEY),
// GOOGLE_APPLICATION_CREDENTIALS (CREDENTIAL), DOCKER_AUTH_CONFIG (AUTH).
var SecretEnvNames = []string{
	"*KEY*", "*SECRET*", "*TOKEN*",
	"*PASSWORD*", "*PASSWD*", "*PASSPHRASE*",
	// PASS as a word of its own (SMTP_PASS, DB_PASS_FILE), not inside one
	// (BYPASS, COMPASS, and never PATH).
	"PASS", "*_PASS", "PASS_*", "*_PASS_*",
	// PWD as the last word (MYSQL_PWD), not PWD or OLDPWD, the shell's own.
	"*_PWD",
	"*CREDENTIAL*", "*AUTH*", "*COOKIE*", "*BEARER*", "*JWT*",
	"*CONNECTION_STRING*", "*_DSN", "DSN",
}

// SecretEnvExceptions match names that SecretEnvNames would drop but that
// carry no secret: AUTHOR as a word (git's GIT_AUTHOR_NAME, _EMAIL, _DATE;
// not XAUTHORITY, which points at the X cookie) and the ssh-agent socket's
// path (the sandbox masks the socket; the scan that masks it reads the
// variable).
var SecretEnvExceptions = []string{"AUTHOR", "AUTHOR_*", "*_AUTHOR", "*_AUTHOR_*", "SSH_AUTH_SOCK"}

// SecretEnvValueRule says in words which values are dropped whatever the
// name, for doctor.
const SecretEnvValueRule = "values holding a URL with a password (scheme://user:password@host, as in DATABASE_URL, HTTP_PROXY, PIP_INDEX_URL)"

// urlWithPassword finds scheme://user:password@ with a non-empty password;
// a user alone (ssh://git@host) is not a secret.
var urlWithPassword = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]*:[^/?#@\s]+@`)

// IsSecretEnv reports whether the variable name=value is dropped by the
// secret filter.
func IsSecretEnv(name, value string) bool {
	if matchAny(SecretEnvNames, name) && !matchAny(SecretEnvExceptions, name) {
		return true
	}
	// The pattern needs both: most values have neither.
	return strings.Contains(value, "://") && strings.Contains(value, "@") && urlWithPassword().MatchString(value)
}
