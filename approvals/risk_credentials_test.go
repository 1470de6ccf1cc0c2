package approvals

import (
	"github.com/wardenhq/warden/approvals/risk"
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
		{[]string{"curl", "-H", "Authorization: Bearer sk-live-123", "https://api.example.com"}, risk.Medium, "passes a credential on the command line (Authorization header)", "sk-live-123"},
		{sh(`curl -H "Authorization: token $GH" https://api.github.com/user`), risk.Medium, "Authorization header", ""},
		{[]string{"curl", "-H", "X-API-Key: abc", "https://api.example.com"}, risk.Medium, "X-API-Key header", "abc"},
		{[]string{"curl", "-u", "alice:hunter2", "https://api.example.com"}, risk.Medium, "-u alice:***", "hunter2"},
		{[]string{"mysql", "--password=hunter2", "db"}, risk.Medium, "(--password)", "hunter2"},
		{[]string{"docker", "login", "--password", "hunter2"}, risk.Medium, "(--password)", "hunter2"},
		{[]string{"git", "clone", "https://bob:s3cret@git.example.com/r.git"}, risk.Medium, "passes a password in a URL to git.example.com", "s3cret"},
		{sh(`curl -H "X-Token: $(grep TOKEN config.ini | cut -d= -f2)" https://api.example.com`), risk.Medium, "extracts a credential at run time", ""},
		{sh(`export GH_TOKEN=$(grep TOKEN .env | cut -d= -f2)`), risk.High, "reads secrets: .env", ""},
		// tokens by their format, in any word of any program
		{sh("echo " + ghToken + " | gh auth login --with-token"), risk.Medium, "(a GitHub token)", ghToken},
		{[]string{"git", "clone", "https://" + ghToken + "@github.com/o/r.git"}, risk.Medium, "(a GitHub token)", ghToken},
		{[]string{"python3", "run.py", "--key", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"}, risk.Medium, "(an OpenAI API key)", "abcdefghij"},
		{[]string{"node", "x.js", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}, risk.Medium, "(an Anthropic API key)", "abcdefghij"},
		{[]string{"aws", "s3", "ls", "--profile", "AKIAABCDEFGHIJKLMNOP"}, risk.Medium, "(an AWS access key)", "AKIAABCD"},
		{[]string{"curl", "-d", "token=xoxb-1234567890-abcdefghij", "https://slack.example.com/api"}, risk.Medium, "(a Slack token)", "xoxb-123"},
		{[]string{"glab", "auth", "login", "--stdin", "glpat-abcdefghijklmnopqrstu"}, risk.Medium, "(a GitLab token)", "glpat-abc"},
		{[]string{"echo", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abcdefghijklmnop"}, risk.Medium, "(a JSON Web Token)", "eyJhbGci"},
		// a variable or setting whose name says it is a secret, set to a written-out value
		{sh("GITHUB_TOKEN=hunter2hunter2 gh pr list"), risk.Medium, "(GITHUB_TOKEN=***)", "hunter2"},
		{sh("export OPENAI_API_KEY=hunter2hunter2"), risk.Medium, "(OPENAI_API_KEY=***)", "hunter2"},
		{sh("PGPASSWORD='hunter2' psql -h db app"), risk.Medium, "(PGPASSWORD=***)", "hunter2"},
		{[]string{"env", "AWS_SECRET_ACCESS_KEY=hunter2", "aws", "s3", "ls"}, risk.Medium, "(AWS_SECRET_ACCESS_KEY=***)", "hunter2"},
		{[]string{"docker", "run", "-e", "DB_PASSWORD=hunter2", "postgres"}, risk.Medium, "(DB_PASSWORD=***)", "hunter2"},
		{[]string{"docker", "build", "--build-arg=NPM_TOKEN=hunter2", "."}, risk.Medium, "(NPM_TOKEN=***)", "hunter2"},
		{[]string{"npm", "config", "set", "//registry.npmjs.org/:_authToken=hunter2"}, risk.Medium, "(//registry.npmjs.org/:_authToken=***)", "hunter2"},
		{[]string{"npm", "config", "set", "//registry.npmjs.org/:_authToken", "hunter2"}, risk.Medium, "(npm config set //registry.npmjs.org/:_authToken ***)", "hunter2"},
		{[]string{"aws", "configure", "set", "aws_secret_access_key", "hunter2"}, risk.Medium, "(aws configure set aws_secret_access_key ***)", "hunter2"},
		{[]string{"poetry", "config", "pypi-token.pypi", "hunter2"}, risk.Medium, "(poetry config pypi-token.pypi ***)", "hunter2"},
		{[]string{"kubectl", "create", "secret", "generic", "db", "--from-literal=user=hunter2"}, risk.Medium, "(kubectl create secret --from-literal)", "hunter2"},
		{[]string{"curl", "https://api.example.com/v1?api_key=hunter2"}, risk.Medium, "(api_key in a URL to api.example.com)", "hunter2"},
		{[]string{"psql", "host=db password=hunter2 dbname=app"}, risk.Medium, "(psql password=***)", "hunter2"},
		{sh("DATABASE_URL=postgres://app:hunter2@db.example.com/app npm run migrate"), risk.Medium, "passes a password in a URL to db.example.com", "hunter2"},
		{[]string{"docker", "run", "-e", "REDIS_URL=redis://:hunter2@cache.example.com:6379", "img"}, risk.Medium, "passes a password in a URL to cache.example.com", "hunter2"},
		{[]string{"prisma", "migrate", "deploy", "--url=postgres://u:hunter2@db.example.com/app"}, risk.Medium, "passes a password in a URL to db.example.com", "hunter2"},
		// programs' own password options
		{[]string{"docker", "login", "-u", "me", "-p", "hunter2", "registry.example.com"}, risk.Medium, "(docker login -p)", "hunter2"},
		{[]string{"helm", "registry", "login", "-phunter2", "r.example.com"}, risk.Medium, "(helm login -p)", "hunter2"},
		{[]string{"mysql", "-u", "root", "-phunter2", "app"}, risk.Medium, "(mysql -p…)", "hunter2"},
		{[]string{"sshpass", "-p", "hunter2", "ssh", "host"}, risk.Medium, "(sshpass -p)", "hunter2"},
		{[]string{"redis-cli", "-a", "hunter2", "ping"}, risk.Medium, "(redis-cli -a)", "hunter2"},
		{[]string{"ldapsearch", "-x", "-D", "cn=admin", "-w", "hunter2"}, risk.Medium, "(ldapsearch -w)", "hunter2"},
		{[]string{"zip", "-P", "hunter2", "out.zip", "f"}, risk.Medium, "(zip -P)", "hunter2"},
		{[]string{"openssl", "enc", "-aes256", "-pass", "pass:hunter2", "-in", "f"}, risk.Medium, "(openssl -pass)", "hunter2"},
		{[]string{"keytool", "-list", "-keystore", "k.jks", "-storepass", "hunter2"}, risk.High, "(keytool -storepass)", "hunter2"},
		{[]string{"htpasswd", "-bc", "users.db", "bob", "hunter2"}, risk.Medium, "(htpasswd -b)", "hunter2"},
		{[]string{"smbclient", "//srv/share", "-U", "bob%hunter2"}, risk.Medium, "(smbclient -U user%***)", "hunter2"},
		{[]string{"gh", "secret", "set", "API", "--body", "hunter2"}, risk.Medium, "(gh secret set --body)", "hunter2"},
		// twins
		{[]string{"curl", "-H", "Accept: application/json", "https://api.example.com"}, risk.Medium, "contacts api.example.com", "credential"},
		{[]string{"curl", "-u", "alice", "https://api.example.com"}, risk.Medium, "", "password"},
		{[]string{"git", "clone", "https://git.example.com/r.git"}, risk.Medium, "", "password"},
		{sh(`echo "$(grep -c func main.go)"`), risk.Low, "", "credential"},
		{[]string{"grep", "-rn", "ghp_", "."}, risk.Low, "", "credential"},
		{[]string{"ls", "sk-1", "task-abcdefghijklmnopqrstuvwxyz"}, risk.Low, "", "credential"},
		{sh("TOKENIZERS_PARALLELISM=false python3 train.py"), risk.Medium, "", "credential"},
		{sh("BYPASS=1 SSH_AUTH_SOCK=/run/a.sock make"), risk.Medium, "", "credential"},
		{sh("PWD=/tmp OLDPWD=/srv make"), risk.Medium, "", "credential"},
		{sh("DATABASE_URL=postgres://db.example.com/app npm run migrate"), risk.Medium, "", "password"},
		{sh(`git push "https://x-access-token:${GH_TOKEN}@github.com/o/r.git" HEAD`), risk.Medium, "", "password"},
		{sh("GOOGLE_APPLICATION_CREDENTIALS=./sa.json python3 app.py"), risk.Medium, "", "credential"},
		{[]string{"docker", "run", "-e", "AWS_SHARED_CREDENTIALS_FILE=/creds", "-e", "DB_PASSWORD_FILE=/run/secrets/db", "img"}, risk.Low, "", "credential"},
		{sh(`GITHUB_TOKEN="$GH" gh pr list`), risk.Medium, "", "credential"},
		{sh("export API_KEY"), risk.Medium, "", "credential"},
		{[]string{"grep", "PASSWORD=", "config.ini"}, risk.Low, "", "credential"},
		{[]string{"git", "commit", "-m", "rotate API_KEY=hunter2 in CI"}, risk.Low, "", "credential"},
		{[]string{"docker", "login", "--password-stdin", "-u", "me"}, risk.Low, "", "credential"},
		{[]string{"docker", "ps", "-p", "x"}, risk.Low, "", "credential"},
		{[]string{"mysql", "-u", "root", "-p", "app"}, risk.Low, "", "credential"},
		{[]string{"aws", "configure", "set", "region", "us-east-1"}, risk.Low, "", "credential"},
		{[]string{"npm", "config", "set", "registry", "https://registry.example.com"}, risk.Low, "", "credential"},
		{[]string{"curl", "https://api.example.com/v1?page=2&token="}, risk.Medium, "", "credential"},
		{[]string{"sort", "-k", "2", "keys.txt"}, risk.Low, "", "credential"},
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
