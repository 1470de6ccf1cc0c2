package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"testing"
)

// TestRiskServices: deleting what lives outside this machine's files
// (cloud resources, clusters, volumes, databases, hosted repositories) and
// publishing packages are high risk, named by their subcommand; the twins
// only read or plan.
func TestRiskServices(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"kubectl", "delete", "ns", "prod"}, RiskHigh, "deletes Kubernetes resources (kubectl delete ns prod)", ""},
		{[]string{"kubectl", "-n", "prod", "delete", "pod", "--all"}, RiskHigh, "deletes Kubernetes resources", ""},
		{[]string{"kubectl", "delete", "pod", "web-1", "--dry-run=none"}, RiskHigh, "deletes Kubernetes resources", ""},
		{[]string{"helm", "uninstall", "web"}, RiskHigh, "uninstalls a Helm release (helm uninstall web)", ""},
		{[]string{"terraform", "destroy", "-auto-approve"}, RiskHigh, "destroys the infrastructure", ""},
		{[]string{"terraform", "apply", "-destroy"}, RiskHigh, "destroys the infrastructure", ""},
		{[]string{"terraform", "apply", "-auto-approve"}, RiskHigh, "changes infrastructure without a review", ""},
		{[]string{"pulumi", "destroy", "--yes"}, RiskHigh, "destroys the stack's cloud resources", ""},
		{[]string{"aws", "s3", "rm", "s3://bucket", "--recursive"}, RiskHigh, "deletes AWS resources (aws s3 rm)", ""},
		{[]string{"aws", "s3", "sync", ".", "s3://b", "--delete"}, RiskHigh, "deletes AWS resources (aws s3 sync)", ""},
		{[]string{"aws", "--region", "eu-west-1", "ec2", "terminate-instances", "--instance-ids", "i-1"}, RiskHigh, "deletes AWS resources (aws ec2 terminate-instances)", ""},
		{[]string{"gcloud", "compute", "instances", "delete", "vm-1"}, RiskHigh, "deletes cloud resources (gcloud compute instances delete)", ""},
		{[]string{"az", "group", "delete", "-n", "rg"}, RiskHigh, "deletes cloud resources (az group delete)", ""},
		{[]string{"gh", "repo", "delete", "o/r", "--yes"}, RiskHigh, "deletes data on the hosting service (gh repo delete o/r)", ""},
		{[]string{"gh", "release", "delete", "v1.0"}, RiskHigh, "gh release delete", ""},
		{[]string{"docker", "volume", "rm", "pgdata"}, RiskHigh, "deletes container volumes and their data (docker volume rm)", ""},
		{[]string{"docker", "system", "prune", "-af"}, RiskHigh, "docker system prune", ""},
		{[]string{"docker", "compose", "down", "-v"}, RiskHigh, "deletes the project's containers and volumes", ""},
		{[]string{"npm", "publish"}, RiskHigh, "publishes this package to registry.npmjs.org", ""},
		{[]string{"npm", "unpublish", "pkg@1.0.0"}, RiskHigh, "unpublishes a package", ""},
		{[]string{"cargo", "publish"}, RiskHigh, "publishes this package to crates.io", ""},
		{[]string{"pnpm", "publish", "--access", "public"}, RiskHigh, "publishes the package to the registry, publicly (pnpm publish)", ""},
		{[]string{"uv", "publish"}, RiskHigh, "publishes the package to the registry, publicly (uv publish)", ""},
		{[]string{"gem", "push", "x-1.0.gem"}, RiskHigh, "publishes the package to the registry, publicly (gem push)", ""},
		{[]string{"twine", "upload", "dist/*"}, RiskHigh, "publishes the package", ""},
		{[]string{"dropdb", "app"}, RiskHigh, "drops a database or its user (dropdb app)", ""},
		{[]string{"psql", "-c", "DROP TABLE users"}, RiskHigh, "runs SQL that deletes data (DROP TABLE)", ""},
		{[]string{"mysql", "-e", "delete from sessions;", "app"}, RiskHigh, "runs SQL that deletes data (delete from sessions)", ""},
		{[]string{"mongosh", "--eval", "db.dropDatabase()"}, RiskHigh, "runs SQL that deletes data", ""},
		{[]string{"redis-cli", "-n", "2", "flushdb"}, RiskHigh, "deletes every key (redis-cli FLUSHDB)", ""},
		{[]string{"git", "rm", "-rf", "src"}, RiskMedium, "deletes files with uncommitted changes (git rm -f)", ""},
		{[]string{"rsync", "-a", "--delete", "src/", "dst/"}, RiskMedium, "deletes files at the destination that the source lacks", ""},
		// twins
		{[]string{"kubectl", "get", "pods"}, RiskLow, "", "deletes"},
		{[]string{"kubectl", "delete", "pod", "web-1", "--dry-run=client"}, RiskLow, "", "deletes"},
		{[]string{"helm", "uninstall", "--help"}, RiskLow, "", "Helm"},
		{[]string{"gh", "release", "delete", "--help"}, RiskLow, "", "deletes"},
		{[]string{"helm", "list"}, RiskLow, "", "Helm"},
		{[]string{"terraform", "plan", "-destroy"}, RiskLow, "", "destroys"},
		{[]string{"terraform", "apply"}, RiskLow, "", "infrastructure"},
		{[]string{"aws", "s3", "ls", "s3://bucket"}, RiskMedium, "contacts s3.amazonaws.com", "deletes"},
		{[]string{"aws", "ec2", "describe-instances"}, RiskLow, "", "deletes"},
		{[]string{"gh", "repo", "view", "o/r"}, RiskMedium, "contacts github.com", "deletes"},
		{[]string{"docker", "volume", "ls"}, RiskLow, "", "deletes"},
		{[]string{"docker", "compose", "down"}, RiskLow, "", "volumes"},
		{[]string{"npm", "run", "publish"}, RiskLow, "", "publishes"},
		{[]string{"npm", "publish", "--dry-run"}, RiskMedium, "checks what would be published to registry.npmjs.org", "publishes"},
		{[]string{"cargo", "publish", "-n"}, RiskMedium, "checks what would be published to crates.io", "publishes"},
		{[]string{"pnpm", "publish", "--dry-run"}, RiskLow, "", "publishes"},
		{[]string{"psql", "-c", "DELETE FROM sessions WHERE expires < now()"}, RiskLow, "", "deletes data"},
		{[]string{"psql", "-c", "SELECT count(*) FROM users"}, RiskLow, "", "deletes data"},
		{[]string{"redis-cli", "get", "flushall"}, RiskLow, "", "every key"},
		{[]string{"git", "rm", "--cached", "-r", "build"}, RiskLow, "", "deletes"},
		{[]string{"git", "rm", "old.txt"}, RiskLow, "", "deletes"},
		{[]string{"rsync", "-a", "src/", "dst/"}, RiskLow, "", "deletes"},
	})
}

// TestServiceDeletionDecisions: a remote deletion asks under on-request;
// under never it runs sandboxed (off the network it cannot reach the
// service) but is refused without a sandbox.
func TestServiceDeletionDecisions(t *testing.T) {
	checkOfflineStoppedDecisions(t, []string{"kubectl", "delete", "ns", "prod"})
}

// checkOfflineStoppedDecisions checks the decisions for a high-risk command
// that only a sandbox keeping it off the network stops: asked under
// on-request with no rule offered, run sandboxed under never, refused
// under never without a sandbox.
func checkOfflineStoppedDecisions(t *testing.T, argv []string) {
	t.Helper()
	ws, _ := looseWorkspace(t)
	ev := func(ask AskForApproval, mode SandboxMode) *Evaluation {
		return (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: argv, Cwd: ws,
			Sandbox: Sandbox{Mode: mode, Workspace: []string{ws}}})
	}
	if e := ev(OnRequest, WorkspaceWrite); e.Decision != rules.Prompt || e.Risk.Level != RiskHigh || e.Amendment != nil {
		t.Errorf("%q on-request: %s %s amend %q (%s)", argv, e.Decision, e.Risk.Level, e.Amendment, e.Reason)
	}
	if e := ev(Never, WorkspaceWrite); e.Decision != rules.Allow {
		t.Errorf("%q never, sandboxed: %s (%s)", argv, e.Decision, e.Reason)
	}
	if e := ev(Never, DangerFullAccess); e.Decision != rules.Forbidden {
		t.Errorf("%q never, no sandbox: %s (%s)", argv, e.Decision, e.Reason)
	}
}

// TestRiskRemoteRuns: a command run on another machine, in a container or
// a pod, and an HTTP DELETE, are beyond any sandbox of this machine; only
// what is known to just read stays medium. The twins connect, read or ask
// for data.
func TestRiskRemoteRuns(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{sh("ssh prod 'rm -rf /srv/data'"), RiskHigh, "runs commands on prod, where no sandbox confines them: `rm -rf /srv/data`", ""},
		{[]string{"ssh", "-p", "2222", "-l", "deploy", "prod.example.com", "sudo", "systemctl", "restart", "app"}, RiskHigh, "runs commands on prod.example.com", ""},
		{[]string{"ssh", "-tt", "-J", "bastion", "ops@prod", "bash", "deploy.sh"}, RiskHigh, "runs commands on prod", ""},
		{[]string{"kubectl", "exec", "web-1", "-c", "app", "--", "rm", "-rf", "/data"}, RiskHigh, "runs commands on the pod web-1", ""},
		{[]string{"docker", "exec", "-u", "postgres", "db", "psql", "-c", "DROP TABLE x"}, RiskHigh, "runs commands on the container db, where no sandbox confines them: `psql -c 'DROP TABLE x'`", ""},
		// secrets read elsewhere come back to the agent
		{sh(`kubectl exec -it web -- sh -c "cat /var/run/secrets/kubernetes.io/serviceaccount/token"`), RiskHigh, "reads secrets: /var/run/secrets/kubernetes.io/serviceaccount/token on the pod web", ""},
		{[]string{"docker", "exec", "app", "cat", "/run/secrets/db_password"}, RiskHigh, "reads secrets: /run/secrets/db_password on the container app", ""},
		{[]string{"ssh", "deploy@prod.example.com", "cat", "~/.aws/credentials"}, RiskHigh, "reads secrets: ~/.aws/credentials on prod.example.com", ""},
		{[]string{"cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"}, RiskHigh, "reads secrets", ""},
		{[]string{"ansible-playbook", "-i", "prod", "deploy.yml"}, RiskHigh, "runs Ansible tasks on remote hosts", ""},
		{[]string{"curl", "-X", "DELETE", "https://api.example.com/v1/users/1"}, RiskHigh, "sends a DELETE request to api.example.com", ""},
		{[]string{"curl", "-XDELETE", "https://api.example.com/v1/x"}, RiskHigh, "sends a DELETE request to api.example.com", ""},
		{[]string{"curl", "--request=delete", "https://api.example.com/v1/x"}, RiskHigh, "sends a DELETE request", ""},
		{[]string{"http", "DELETE", "api.example.com/items/1"}, RiskHigh, "sends a DELETE request to api.example.com", ""},
		{[]string{"gh", "api", "--method", "DELETE", "repos/o/r"}, RiskHigh, "sends a DELETE request to api.github.com", ""},
		{[]string{"wget", "--method=DELETE", "https://x.example.com/a"}, RiskHigh, "sends a DELETE request to x.example.com", ""},
		// twins
		{[]string{"ssh", "prod"}, RiskMedium, "contacts prod", "runs"},
		{[]string{"ssh", "prod", "ls", "-la", "/srv"}, RiskMedium, "runs `ls -la /srv` on prod", "no sandbox"},
		{[]string{"kubectl", "exec", "web", "--", "ls", "/"}, RiskMedium, "runs `ls /` on the pod web", "no sandbox"},
		{[]string{"docker", "exec", "web", "cat", "/etc/os-release"}, RiskMedium, "on the container web", "no sandbox"},
		{[]string{"kubectl", "logs", "web"}, RiskLow, "", "runs"},
		{[]string{"ansible-playbook", "--check", "deploy.yml"}, RiskLow, "", "Ansible"},
		{[]string{"curl", "-X", "GET", "https://api.example.com"}, RiskMedium, "", "DELETE"},
		{[]string{"curl", "-X", "POST", "-d", "a=1", "https://api.example.com"}, RiskMedium, "", "DELETE"},
		{[]string{"curl", "https://api.example.com/delete"}, RiskMedium, "", "DELETE"},
		{[]string{"http", "GET", "api.example.com/items"}, RiskLow, "", "DELETE"},
		{[]string{"gh", "api", "repos/o/r"}, RiskMedium, "contacts github.com", "DELETE"},
		{[]string{"curl", "-X", "DELETE", "http://localhost:8080/api/items/1"}, RiskMedium, "sends a DELETE request to localhost", ""},
		{[]string{"curl", "-X", "DELETE", "http://127.0.0.1:3000/x"}, RiskMedium, "sends a DELETE request to 127.0.0.1", ""},
	})
}

// TestRiskPublishesAndClusterChanges: pushing an image publishes what was
// built into it (high, like npm publish); applying manifests or upgrading
// a release changes a cluster (medium, named). Both were "low, nothing
// risky found". Pulls, builds without --push and reads stay as they were.
func TestRiskPublishesAndClusterChanges(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"docker", "push", "ghcr.io/acme/app:latest"}, RiskHigh, "publishes the image ghcr.io/acme/app:latest, and what was built into it, to ghcr.io (docker push)", ""},
		{[]string{"docker", "push", "app"}, RiskHigh, "to registry-1.docker.io", ""},
		{[]string{"podman", "image", "push", "quay.io/x/y"}, RiskHigh, "to quay.io (podman push)", ""},
		{[]string{"docker", "buildx", "build", "--push", "-t", "ghcr.io/acme/app", "."}, RiskHigh, "publishes the image ghcr.io/acme/app it builds", ""},
		{[]string{"oras", "push", "registry.example.com/x:1", "./file"}, RiskHigh, "publishes files or an image to a registry (oras push)", ""},
		{[]string{"helm", "push", "chart.tgz", "oci://ghcr.io/acme"}, RiskHigh, "publishes a chart", ""},
		{[]string{"kubectl", "apply", "-f", "k8s/"}, RiskMedium, "changes Kubernetes resources (kubectl apply", ""},
		{[]string{"kubectl", "rollout", "restart", "deploy/app"}, RiskMedium, "changes Kubernetes resources (kubectl rollout restart)", ""},
		{[]string{"kubectl", "set", "image", "deploy/app", "app=x:2"}, RiskMedium, "changes Kubernetes resources", ""},
		{[]string{"helm", "upgrade", "--install", "app", "./chart"}, RiskMedium, "changes a Helm release in the cluster", ""},
		// twins
		{[]string{"docker", "push", "--help"}, RiskLow, "", "publishes"},
		{[]string{"docker", "build", "-t", "app", "."}, RiskLow, "", "publishes"},
		{[]string{"docker", "pull", "node:20"}, RiskMedium, "contacts registry-1.docker.io", "publishes"},
		{[]string{"kubectl", "get", "pods"}, RiskLow, "", "changes"},
		{[]string{"kubectl", "apply", "-f", "k8s/", "--dry-run=client"}, RiskLow, "", "changes"},
		{[]string{"helm", "list"}, RiskLow, "", "changes"},
		{[]string{"helm", "template", "./chart"}, RiskLow, "", "changes"},
	})
}

// TestRiskDeploys: what puts the workspace's code live at a service's
// production address, or changes cloud resources without a review, is
// high, named; as terraform apply -auto-approve is. Twins: a preview
// deploy, a plan shown first, reads.
func TestRiskDeploys(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"vercel", "--prod"}, RiskHigh, "deploys to production on Vercel (vercel --prod)", ""},
		{[]string{"vercel", "deploy", "--prod", "--yes"}, RiskHigh, "deploys to production on Vercel", ""},
		{[]string{"netlify", "deploy", "--prod", "--dir", "dist"}, RiskHigh, "deploys to production on Netlify (netlify deploy --prod)", ""},
		{[]string{"fly", "deploy"}, RiskHigh, "deploys the app on Fly.io (fly deploy)", ""},
		{[]string{"flyctl", "deploy", "--remote-only"}, RiskHigh, "deploys the app on Fly.io (flyctl deploy)", ""},
		{[]string{"firebase", "deploy", "--only", "hosting"}, RiskHigh, "deploys to Firebase (firebase deploy)", ""},
		{[]string{"wrangler", "deploy"}, RiskHigh, "deploys the Worker on Cloudflare (wrangler deploy)", ""},
		{[]string{"gcloud", "run", "deploy", "web", "--source", "."}, RiskHigh, "deploys to Google Cloud (gcloud run deploy)", ""},
		{[]string{"sls", "deploy", "--stage", "prod"}, RiskHigh, "deploys the service (sls deploy)", ""},
		{[]string{"aws", "lambda", "update-function-code", "--function-name", "prod", "--zip-file", "fileb://f.zip"}, RiskHigh, "replaces the code of the Lambda function prod", ""},
		{[]string{"pulumi", "up", "--yes"}, RiskHigh, "changes cloud resources without a review (pulumi up)", ""},
		{[]string{"cdk", "deploy", "--require-approval", "never"}, RiskHigh, "changes cloud resources without a review (cdk deploy)", ""},
		// twins
		{[]string{"vercel"}, RiskLow, "", "deploys"},
		{[]string{"vercel", "logs", "web"}, RiskLow, "", "deploys"},
		{[]string{"netlify", "deploy", "--dir", "dist"}, RiskLow, "", "production"},
		{[]string{"pulumi", "up"}, RiskMedium, "after a review it shows", "without"},
		{[]string{"pulumi", "preview"}, RiskLow, "", "changes"},
		{[]string{"cdk", "diff"}, RiskLow, "", "changes"},
		{[]string{"fly", "status"}, RiskLow, "", "deploys"},
		{[]string{"gcloud", "run", "services", "list"}, RiskLow, "", "deploys"},
		{[]string{"aws", "lambda", "get-function", "--function-name", "prod"}, RiskLow, "", "replaces"},
	})
}
