package approvals

import (
	"github.com/wardenhq/warden/approvals/risk"
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
		{[]string{"kubectl", "delete", "ns", "prod"}, risk.High, "deletes Kubernetes resources (kubectl delete ns prod)", ""},
		{[]string{"kubectl", "-n", "prod", "delete", "pod", "--all"}, risk.High, "deletes Kubernetes resources", ""},
		{[]string{"kubectl", "delete", "pod", "web-1", "--dry-run=none"}, risk.High, "deletes Kubernetes resources", ""},
		{[]string{"helm", "uninstall", "web"}, risk.High, "uninstalls a Helm release (helm uninstall web)", ""},
		{[]string{"terraform", "destroy", "-auto-approve"}, risk.High, "destroys the infrastructure", ""},
		{[]string{"terraform", "apply", "-destroy"}, risk.High, "destroys the infrastructure", ""},
		{[]string{"terraform", "apply", "-auto-approve"}, risk.High, "changes infrastructure without a review", ""},
		{[]string{"pulumi", "destroy", "--yes"}, risk.High, "destroys the stack's cloud resources", ""},
		{[]string{"aws", "s3", "rm", "s3://bucket", "--recursive"}, risk.High, "deletes AWS resources (aws s3 rm)", ""},
		{[]string{"aws", "s3", "sync", ".", "s3://b", "--delete"}, risk.High, "deletes AWS resources (aws s3 sync)", ""},
		{[]string{"aws", "--region", "eu-west-1", "ec2", "terminate-instances", "--instance-ids", "i-1"}, risk.High, "deletes AWS resources (aws ec2 terminate-instances)", ""},
		{[]string{"gcloud", "compute", "instances", "delete", "vm-1"}, risk.High, "deletes cloud resources (gcloud compute instances delete)", ""},
		{[]string{"az", "group", "delete", "-n", "rg"}, risk.High, "deletes cloud resources (az group delete)", ""},
		{[]string{"gh", "repo", "delete", "o/r", "--yes"}, risk.High, "deletes data on the hosting service (gh repo delete o/r)", ""},
		{[]string{"gh", "release", "delete", "v1.0"}, risk.High, "gh release delete", ""},
		{[]string{"docker", "volume", "rm", "pgdata"}, risk.High, "deletes container volumes and their data (docker volume rm)", ""},
		{[]string{"docker", "system", "prune", "-af"}, risk.High, "docker system prune", ""},
		{[]string{"docker", "compose", "down", "-v"}, risk.High, "deletes the project's containers and volumes", ""},
		{[]string{"npm", "publish"}, risk.High, "publishes this package to registry.npmjs.org", ""},
		{[]string{"npm", "unpublish", "pkg@1.0.0"}, risk.High, "unpublishes a package", ""},
		{[]string{"cargo", "publish"}, risk.High, "publishes this package to crates.io", ""},
		{[]string{"pnpm", "publish", "--access", "public"}, risk.High, "publishes the package to the registry, publicly (pnpm publish)", ""},
		{[]string{"uv", "publish"}, risk.High, "publishes the package to the registry, publicly (uv publish)", ""},
		{[]string{"gem", "push", "x-1.0.gem"}, risk.High, "publishes the package to the registry, publicly (gem push)", ""},
		{[]string{"twine", "upload", "dist/*"}, risk.High, "publishes the package", ""},
		{[]string{"dropdb", "app"}, risk.High, "drops a database or its user (dropdb app)", ""},
		{[]string{"psql", "-c", "DROP TABLE users"}, risk.High, "runs SQL that deletes data (DROP TABLE)", ""},
		{[]string{"mysql", "-e", "delete from sessions;", "app"}, risk.High, "runs SQL that deletes data (delete from sessions)", ""},
		{[]string{"mongosh", "--eval", "db.dropDatabase()"}, risk.High, "runs SQL that deletes data", ""},
		{[]string{"redis-cli", "-n", "2", "flushdb"}, risk.High, "deletes every key (redis-cli FLUSHDB)", ""},
		{[]string{"git", "rm", "-rf", "src"}, risk.Medium, "deletes files with uncommitted changes (git rm -f)", ""},
		{[]string{"rsync", "-a", "--delete", "src/", "dst/"}, risk.Medium, "deletes files at the destination that the source lacks", ""},
		// twins
		{[]string{"kubectl", "get", "pods"}, risk.Low, "", "deletes"},
		{[]string{"kubectl", "delete", "pod", "web-1", "--dry-run=client"}, risk.Low, "", "deletes"},
		{[]string{"helm", "uninstall", "--help"}, risk.Low, "", "Helm"},
		{[]string{"gh", "release", "delete", "--help"}, risk.Low, "", "deletes"},
		{[]string{"helm", "list"}, risk.Low, "", "Helm"},
		{[]string{"terraform", "plan", "-destroy"}, risk.Low, "", "destroys"},
		{[]string{"terraform", "apply"}, risk.Low, "", "infrastructure"},
		{[]string{"aws", "s3", "ls", "s3://bucket"}, risk.Medium, "contacts s3.amazonaws.com", "deletes"},
		{[]string{"aws", "ec2", "describe-instances"}, risk.Low, "", "deletes"},
		{[]string{"gh", "repo", "view", "o/r"}, risk.Medium, "contacts github.com", "deletes"},
		{[]string{"docker", "volume", "ls"}, risk.Low, "", "deletes"},
		{[]string{"docker", "compose", "down"}, risk.Low, "", "volumes"},
		{[]string{"npm", "run", "publish"}, risk.Low, "", "publishes"},
		{[]string{"npm", "publish", "--dry-run"}, risk.Medium, "checks what would be published to registry.npmjs.org", "publishes"},
		{[]string{"cargo", "publish", "-n"}, risk.Medium, "checks what would be published to crates.io", "publishes"},
		{[]string{"pnpm", "publish", "--dry-run"}, risk.Low, "", "publishes"},
		{[]string{"psql", "-c", "DELETE FROM sessions WHERE expires < now()"}, risk.Low, "", "deletes data"},
		{[]string{"psql", "-c", "SELECT count(*) FROM users"}, risk.Low, "", "deletes data"},
		{[]string{"redis-cli", "get", "flushall"}, risk.Low, "", "every key"},
		{[]string{"git", "rm", "--cached", "-r", "build"}, risk.Low, "", "deletes"},
		{[]string{"git", "rm", "old.txt"}, risk.Low, "", "deletes"},
		{[]string{"rsync", "-a", "src/", "dst/"}, risk.Low, "", "deletes"},
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
	if e := ev(OnRequest, WorkspaceWrite); e.Decision != rules.Prompt || e.Risk.Level != risk.High || e.Amendment != nil {
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
		{sh("ssh prod 'rm -rf /srv/data'"), risk.High, "runs commands on prod, where no sandbox confines them: `rm -rf /srv/data`", ""},
		{[]string{"ssh", "-p", "2222", "-l", "deploy", "prod.example.com", "sudo", "systemctl", "restart", "app"}, risk.High, "runs commands on prod.example.com", ""},
		{[]string{"ssh", "-tt", "-J", "bastion", "ops@prod", "bash", "deploy.sh"}, risk.High, "runs commands on prod", ""},
		{[]string{"kubectl", "exec", "web-1", "-c", "app", "--", "rm", "-rf", "/data"}, risk.High, "runs commands on the pod web-1", ""},
		{[]string{"docker", "exec", "-u", "postgres", "db", "psql", "-c", "DROP TABLE x"}, risk.High, "runs commands on the container db, where no sandbox confines them: `psql -c 'DROP TABLE x'`", ""},
		// secrets read elsewhere come back to the agent
		{sh(`kubectl exec -it web -- sh -c "cat /var/run/secrets/kubernetes.io/serviceaccount/token"`), risk.High, "reads secrets: /var/run/secrets/kubernetes.io/serviceaccount/token on the pod web", ""},
		{[]string{"docker", "exec", "app", "cat", "/run/secrets/db_password"}, risk.High, "reads secrets: /run/secrets/db_password on the container app", ""},
		{[]string{"ssh", "deploy@prod.example.com", "cat", "~/.aws/credentials"}, risk.High, "reads secrets: ~/.aws/credentials on prod.example.com", ""},
		{[]string{"cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"}, risk.High, "reads secrets", ""},
		{[]string{"ansible-playbook", "-i", "prod", "deploy.yml"}, risk.High, "runs Ansible tasks on remote hosts", ""},
		{[]string{"curl", "-X", "DELETE", "https://api.example.com/v1/users/1"}, risk.High, "sends a DELETE request to api.example.com", ""},
		{[]string{"curl", "-XDELETE", "https://api.example.com/v1/x"}, risk.High, "sends a DELETE request to api.example.com", ""},
		{[]string{"curl", "--request=delete", "https://api.example.com/v1/x"}, risk.High, "sends a DELETE request", ""},
		{[]string{"http", "DELETE", "api.example.com/items/1"}, risk.High, "sends a DELETE request to api.example.com", ""},
		{[]string{"gh", "api", "--method", "DELETE", "repos/o/r"}, risk.High, "sends a DELETE request to api.github.com", ""},
		{[]string{"wget", "--method=DELETE", "https://x.example.com/a"}, risk.High, "sends a DELETE request to x.example.com", ""},
		// twins
		{[]string{"ssh", "prod"}, risk.Medium, "contacts prod", "runs"},
		{[]string{"ssh", "prod", "ls", "-la", "/srv"}, risk.Medium, "runs `ls -la /srv` on prod", "no sandbox"},
		{[]string{"kubectl", "exec", "web", "--", "ls", "/"}, risk.Medium, "runs `ls /` on the pod web", "no sandbox"},
		{[]string{"docker", "exec", "web", "cat", "/etc/os-release"}, risk.Medium, "on the container web", "no sandbox"},
		{[]string{"kubectl", "logs", "web"}, risk.Low, "", "runs"},
		{[]string{"ansible-playbook", "--check", "deploy.yml"}, risk.Low, "", "Ansible"},
		{[]string{"curl", "-X", "GET", "https://api.example.com"}, risk.Medium, "", "DELETE"},
		{[]string{"curl", "-X", "POST", "-d", "a=1", "https://api.example.com"}, risk.Medium, "", "DELETE"},
		{[]string{"curl", "https://api.example.com/delete"}, risk.Medium, "", "DELETE"},
		{[]string{"http", "GET", "api.example.com/items"}, risk.Low, "", "DELETE"},
		{[]string{"gh", "api", "repos/o/r"}, risk.Medium, "contacts github.com", "DELETE"},
		{[]string{"curl", "-X", "DELETE", "http://localhost:8080/api/items/1"}, risk.Medium, "sends a DELETE request to localhost", ""},
		{[]string{"curl", "-X", "DELETE", "http://127.0.0.1:3000/x"}, risk.Medium, "sends a DELETE request to 127.0.0.1", ""},
	})
}

// TestRiskPublishesAndClusterChanges: pushing an image publishes what was
// built into it (high, like npm publish); applying manifests or upgrading
// a release changes a cluster (medium, named). Both were "low, nothing
// risky found". Pulls, builds without --push and reads stay as they were.
func TestRiskPublishesAndClusterChanges(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"docker", "push", "ghcr.io/acme/app:latest"}, risk.High, "publishes the image ghcr.io/acme/app:latest, and what was built into it, to ghcr.io (docker push)", ""},
		{[]string{"docker", "push", "app"}, risk.High, "to registry-1.docker.io", ""},
		{[]string{"podman", "image", "push", "quay.io/x/y"}, risk.High, "to quay.io (podman push)", ""},
		{[]string{"docker", "buildx", "build", "--push", "-t", "ghcr.io/acme/app", "."}, risk.High, "publishes the image ghcr.io/acme/app it builds", ""},
		{[]string{"oras", "push", "registry.example.com/x:1", "./file"}, risk.High, "publishes files or an image to a registry (oras push)", ""},
		{[]string{"helm", "push", "chart.tgz", "oci://ghcr.io/acme"}, risk.High, "publishes a chart", ""},
		{[]string{"kubectl", "apply", "-f", "k8s/"}, risk.Medium, "changes Kubernetes resources (kubectl apply", ""},
		{[]string{"kubectl", "rollout", "restart", "deploy/app"}, risk.Medium, "changes Kubernetes resources (kubectl rollout restart)", ""},
		{[]string{"kubectl", "set", "image", "deploy/app", "app=x:2"}, risk.Medium, "changes Kubernetes resources", ""},
		{[]string{"helm", "upgrade", "--install", "app", "./chart"}, risk.Medium, "changes a Helm release in the cluster", ""},
		// twins
		{[]string{"docker", "push", "--help"}, risk.Low, "", "publishes"},
		{[]string{"docker", "build", "-t", "app", "."}, risk.Low, "", "publishes"},
		{[]string{"docker", "pull", "node:20"}, risk.Medium, "contacts registry-1.docker.io", "publishes"},
		{[]string{"kubectl", "get", "pods"}, risk.Low, "", "changes"},
		{[]string{"kubectl", "apply", "-f", "k8s/", "--dry-run=client"}, risk.Low, "", "changes"},
		{[]string{"helm", "list"}, risk.Low, "", "changes"},
		{[]string{"helm", "template", "./chart"}, risk.Low, "", "changes"},
	})
}

// TestRiskDeploys: what puts the workspace's code live at a service's
// production address, or changes cloud resources without a review, is
// high, named; as terraform apply -auto-approve is. Twins: a preview
// deploy, a plan shown first, reads.
func TestRiskDeploys(t *testing.T) {
	ctx := looseContext(t)
	checkRisk(t, ctx, []riskCase{
		{[]string{"vercel", "--prod"}, risk.High, "deploys to production on Vercel (vercel --prod)", ""},
		{[]string{"vercel", "deploy", "--prod", "--yes"}, risk.High, "deploys to production on Vercel", ""},
		{[]string{"netlify", "deploy", "--prod", "--dir", "dist"}, risk.High, "deploys to production on Netlify (netlify deploy --prod)", ""},
		{[]string{"fly", "deploy"}, risk.High, "deploys the app on Fly.io (fly deploy)", ""},
		{[]string{"flyctl", "deploy", "--remote-only"}, risk.High, "deploys the app on Fly.io (flyctl deploy)", ""},
		{[]string{"firebase", "deploy", "--only", "hosting"}, risk.High, "deploys to Firebase (firebase deploy)", ""},
		{[]string{"wrangler", "deploy"}, risk.High, "deploys the Worker on Cloudflare (wrangler deploy)", ""},
		{[]string{"gcloud", "run", "deploy", "web", "--source", "."}, risk.High, "deploys to Google Cloud (gcloud run deploy)", ""},
		{[]string{"sls", "deploy", "--stage", "prod"}, risk.High, "deploys the service (sls deploy)", ""},
		{[]string{"aws", "lambda", "update-function-code", "--function-name", "prod", "--zip-file", "fileb://f.zip"}, risk.High, "replaces the code of the Lambda function prod", ""},
		{[]string{"pulumi", "up", "--yes"}, risk.High, "changes cloud resources without a review (pulumi up)", ""},
		{[]string{"cdk", "deploy", "--require-approval", "never"}, risk.High, "changes cloud resources without a review (cdk deploy)", ""},
		// twins
		{[]string{"vercel"}, risk.Low, "", "deploys"},
		{[]string{"vercel", "logs", "web"}, risk.Low, "", "deploys"},
		{[]string{"netlify", "deploy", "--dir", "dist"}, risk.Low, "", "production"},
		{[]string{"pulumi", "up"}, risk.Medium, "after a review it shows", "without"},
		{[]string{"pulumi", "preview"}, risk.Low, "", "changes"},
		{[]string{"cdk", "diff"}, risk.Low, "", "changes"},
		{[]string{"fly", "status"}, risk.Low, "", "deploys"},
		{[]string{"gcloud", "run", "services", "list"}, risk.Low, "", "deploys"},
		{[]string{"aws", "lambda", "get-function", "--function-name", "prod"}, risk.Low, "", "replaces"},
	})
}
