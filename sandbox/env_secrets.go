package sandbox

import (
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

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
