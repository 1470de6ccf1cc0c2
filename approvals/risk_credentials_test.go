package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"slices"
	"testing"
)

// TestRiskLooseTokensOnCommandLine: credentials written into a command's
// words are flagged without repeating them; the twins carry none.
func TestRiskLooseTokensOnCommandLine(t *testing.T) {
	ctx := looseContext(t)
	sh := func(s string) []string { return []string{"bash", "-lc", s} }
	checkRisk(t, ctx, []riskCase{
		{[]string{"curl", "-H", "Authorization: Bearer sk-live-123", "https://api.example.com"}, RiskMedium, "passes a credential on the command line (Authorization header)", "sk-live-123"},
		{sh(`curl -H "Authorization: token $GH" https://api.github.com/user`), RiskMedium, "Authorization header", ""},
		{[]string{"curl", "-H", "X-API-Key: abc", "https://api.example.com"}, RiskMedium, "X-API-Key header", "abc"},
		{[]string{"curl", "-u", "alice:hunter2", "https://api.example.com"}, RiskMedium, "-u alice:***", "hunter2"},
		{[]string{"mysql", "--password=hunter2", "db"}, RiskMedium, "(--password)", "hunter2"},
		{[]string{"docker", "login", "--password", "hunter2"}, RiskMedium, "(--password)", "hunter2"},
		{[]string{"git", "clone", "https://bob:s3cret@git.example.com/r.git"}, RiskMedium, "passes a password in a URL to git.example.com", "s3cret"},
		{sh(`curl -H "X-Token: $(grep TOKEN config.ini | cut -d= -f2)" https://api.example.com`), RiskMedium, "extracts a credential at run time", ""},
		{sh(`export GH_TOKEN=$(grep TOKEN .env | cut -d= -f2)`), RiskHigh, "reads secrets: .env", ""},
		// tokens by their format, in any word of any program
		{sh("echo " + ghToken + " | gh auth login --with-token"), RiskMedium, "(a GitHub token)", ghToken},
		{[]string{"git", "clone", "https://" + ghToken + "@github.com/o/r.git"}, RiskMedium, "(a GitHub token)", ghToken},
		{[]string{"python3", "run.py", "--key", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"}, RiskMedium, "(an OpenAI API key)", "abcdefghij"},
		{[]string{"node", "x.js", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}, RiskMedium, "(an Anthropic API key)", "abcdefghij"},
		{[]string{"aws", "s3", "ls", "--profile", "AKIAABCDEFGHIJKLMNOP"}, RiskMedium, "(an AWS access key)", "AKIAABCD"},
		{[]string{"curl", "-d", "token=xoxb-1234567890-abcdefghij", "https://slack.example.com/api"}, RiskMedium, "(a Slack token)", "xoxb-123"},
		{[]string{"glab", "auth", "login", "--stdin", "glpat-abcdefghijklmnopqrstu"}, RiskMedium, "(a GitLab token)", "glpat-abc"},
		{[]string{"echo", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abcdefghijklmnop"}, RiskMedium, "(a JSON Web Token)", "eyJhbGci"},
		// a variable or setting whose name says it is a secret, set to a written-out value
		{sh("GITHUB_TOKEN=hunter2hunter2 gh pr list"), RiskMedium, "(GITHUB_TOKEN=***)", "hunter2"},
		{sh("export OPENAI_API_KEY=hunter2hunter2"), RiskMedium, "(OPENAI_API_KEY=***)", "hunter2"},
		{sh("PGPASSWORD='hunter2' psql -h db app"), RiskMedium, "(PGPASSWORD=***)", "hunter2"},
		{[]string{"env", "AWS_SECRET_ACCESS_KEY=hunter2", "aws", "s3", "ls"}, RiskMedium, "(AWS_SECRET_ACCESS_KEY=***)", "hunter2"},
		{[]string{"docker", "run", "-e", "DB_PASSWORD=hunter2", "postgres"}, RiskMedium, "(DB_PASSWORD=***)", "hunter2"},
		{[]string{"docker", "build", "--build-arg=NPM_TOKEN=hunter2", "."}, RiskMedium, "(NPM_TOKEN=***)", "hunter2"},
		{[]string{"npm", "config", "set", "//registry.npmjs.org/:_authToken=hunter2"}, RiskMedium, "(//registry.npmjs.org/:_authToken=***)", "hunter2"},
		{[]string{"npm", "config", "set", "//registry.npmjs.org/:_authToken", "hunter2"}, RiskMedium, "(npm config set //registry.npmjs.org/:_authToken ***)", "hunter2"},
		{[]string{"aws", "configure", "set", "aws_secret_access_key", "hunter2"}, RiskMedium, "(aws configure set aws_secret_access_key ***)", "hunter2"},
		{[]string{"poetry", "config", "pypi-token.pypi", "hunter2"}, RiskMedium, "(poetry config pypi-token.pypi ***)", "hunter2"},
		{[]string{"kubectl", "create", "secret", "generic", "db", "--from-literal=user=hunter2"}, RiskMedium, "(kubectl create secret --from-literal)", "hunter2"},
		{[]string{"curl", "https://api.example.com/v1?api_key=hunter2"}, RiskMedium, "(api_key in a URL to api.example.com)", "hunter2"},
		{[]string{"psql", "host=db password=hunter2 dbname=app"}, RiskMedium, "(psql password=***)", "hunter2"},
		{sh("DATABASE_URL=postgres://app:hunter2@db.example.com/app npm run migrate"), RiskMedium, "passes a password in a URL to db.example.com", "hunter2"},
		{[]string{"docker", "run", "-e", "REDIS_URL=redis://:hunter2@cache.example.com:6379", "img"}, RiskMedium, "passes a password in a URL to cache.example.com", "hunter2"},
		{[]string{"prisma", "migrate", "deploy", "--url=postgres://u:hunter2@db.example.com/app"}, RiskMedium, "passes a password in a URL to db.example.com", "hunter2"},
		// programs' own password options
		{[]string{"docker", "login", "-u", "me", "-p", "hunter2", "registry.example.com"}, RiskMedium, "(docker login -p)", "hunter2"},
		{[]string{"helm", "registry", "login", "-phunter2", "r.example.com"}, RiskMedium, "(helm login -p)", "hunter2"},
		{[]string{"mysql", "-u", "root", "-phunter2", "app"}, RiskMedium, "(mysql -p…)", "hunter2"},
		{[]string{"sshpass", "-p", "hunter2", "ssh", "host"}, RiskMedium, "(sshpass -p)", "hunter2"},
		{[]string{"redis-cli", "-a", "hunter2", "ping"}, RiskMedium, "(redis-cli -a)", "hunter2"},
		{[]string{"ldapsearch", "-x", "-D", "cn=admin", "-w", "hunter2"}, RiskMedium, "(ldapsearch -w)", "hunter2"},
		{[]string{"zip", "-P", "hunter2", "out.zip", "f"}, RiskMedium, "(zip -P)", "hunter2"},
		{[]string{"openssl", "enc", "-aes256", "-pass", "pass:hunter2", "-in", "f"}, RiskMedium, "(openssl -pass)", "hunter2"},
		{[]string{"keytool", "-list", "-keystore", "k.jks", "-storepass", "hunter2"}, RiskHigh, "(keytool -storepass)", "hunter2"},
		{[]string{"htpasswd", "-bc", "users.db", "bob", "hunter2"}, RiskMedium, "(htpasswd -b)", "hunter2"},
		{[]string{"smbclient", "//srv/share", "-U", "bob%hunter2"}, RiskMedium, "(smbclient -U user%***)", "hunter2"},
		{[]string{"gh", "secret", "set", "API", "--body", "hunter2"}, RiskMedium, "(gh secret set --body)", "hunter2"},
		// twins
		{[]string{"curl", "-H", "Accept: application/json", "https://api.example.com"}, RiskMedium, "contacts api.example.com", "credential"},
		{[]string{"curl", "-u", "alice", "https://api.example.com"}, RiskMedium, "", "password"},
		{[]string{"git", "clone", "https://git.example.com/r.git"}, RiskMedium, "", "password"},
		{sh(`echo "$(grep -c func main.go)"`), RiskLow, "", "credential"},
		{[]string{"grep", "-rn", "ghp_", "."}, RiskLow, "", "credential"},
		{[]string{"ls", "sk-1", "task-abcdefghijklmnopqrstuvwxyz"}, RiskLow, "", "credential"},
		{sh("TOKENIZERS_PARALLELISM=false python3 train.py"), RiskMedium, "", "credential"},
		{sh("BYPASS=1 SSH_AUTH_SOCK=/run/a.sock make"), RiskMedium, "", "credential"},
		{sh("PWD=/tmp OLDPWD=/srv make"), RiskMedium, "", "credential"},
		{sh("DATABASE_URL=postgres://db.example.com/app npm run migrate"), RiskMedium, "", "password"},
		{sh(`git push "https://x-access-token:${GH_TOKEN}@github.com/o/r.git" HEAD`), RiskMedium, "", "password"},
		{sh("GOOGLE_APPLICATION_CREDENTIALS=./sa.json python3 app.py"), RiskMedium, "", "credential"},
		{[]string{"docker", "run", "-e", "AWS_SHARED_CREDENTIALS_FILE=/creds", "-e", "DB_PASSWORD_FILE=/run/secrets/db", "img"}, RiskLow, "", "credential"},
		{sh(`GITHUB_TOKEN="$GH" gh pr list`), RiskMedium, "", "credential"},
		{sh("export API_KEY"), RiskMedium, "", "credential"},
		{[]string{"grep", "PASSWORD=", "config.ini"}, RiskLow, "", "credential"},
		{[]string{"git", "commit", "-m", "rotate API_KEY=hunter2 in CI"}, RiskLow, "", "credential"},
		{[]string{"docker", "login", "--password-stdin", "-u", "me"}, RiskLow, "", "credential"},
		{[]string{"docker", "ps", "-p", "x"}, RiskLow, "", "credential"},
		{[]string{"mysql", "-u", "root", "-p", "app"}, RiskLow, "", "credential"},
		{[]string{"aws", "configure", "set", "region", "us-east-1"}, RiskLow, "", "credential"},
		{[]string{"npm", "config", "set", "registry", "https://registry.example.com"}, RiskLow, "", "credential"},
		{[]string{"curl", "https://api.example.com/v1?page=2&token="}, RiskMedium, "", "credential"},
		{[]string{"sort", "-k", "2", "keys.txt"}, RiskLow, "", "credential"},
	})
}

// ghToken has a GitHub token's format and is nobody's.
const ghToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// TestCredentialsAreNeverRemembered: "Always allow" would write the
// command's prefix into a rules file, so a prefix that holds a credential is
// never offered; the twin, the same command without it, is.
func TestCredentialsAreNeverRemembered(t *testing.T) {
	ws, _ := riskWorkspace(t, 1)
	for _, c := range []struct {
		argv, proposed []string
		offered        bool
	}{
		{[]string{"curl", "-u", "alice:hunter2", "https://api.example.com"}, nil, false},
		{[]string{"docker", "login", "-u", "me", "-p", "hunter2", "registry.example.com"}, nil, false},
		{[]string{"mysql", "-u", "root", "-phunter2", "app"}, nil, false},
		{[]string{"gh", "api", "-H", "Authorization: token " + ghToken, "/user"}, nil, false},
		{[]string{"curl", "https://api.example.com/v1?api_key=hunter2"}, nil, false},
		{[]string{"gh", "api", "/user", "--token", ghToken}, nil, false},
		// the model proposes a prefix with the secret in it
		{[]string{"docker", "login", "-u", "me", "-p", "hunter2", "r.example.com"}, []string{"docker", "login", "-u", "me", "-p", "hunter2"}, false},
		// twins
		{[]string{"curl", "https://api.example.com"}, nil, true},
		{[]string{"docker", "login", "-u", "me", "registry.example.com"}, nil, true},
		{[]string{"mysql", "-u", "root", "-p", "app"}, nil, true},
		{[]string{"docker", "login", "-u", "me", "-p", "hunter2", "r.example.com"}, []string{"docker", "login", "-u", "me"}, true},
	} {
		e := (&Evaluator{Policy: Policy{Ask: Untrusted}}).Evaluate(CommandRequest{Argv: c.argv, Cwd: ws, PrefixRule: c.proposed,
			Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}})
		if e.Decision != rules.Prompt {
			t.Errorf("%q: decision %s, want prompt (%s)", c.argv, e.Decision, e.Reason)
			continue
		}
		if offered := len(e.Amendment) > 0; offered != c.offered {
			t.Errorf("%q (proposed %q): amendment %q, offered %v, want %v", c.argv, c.proposed, e.Amendment, offered, c.offered)
		}
		if acts := (PromptRequest{Risk: e.Risk, Amendment: e.Amendment}).Actions(); !c.offered && slices.ContainsFunc(acts, func(a Action) bool { return a.Decision == ApprovedWithAmendment }) {
			t.Errorf("%q: the dialog offers to remember it: %v", c.argv, acts)
		}
	}
}
