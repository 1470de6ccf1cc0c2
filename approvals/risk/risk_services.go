package risk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/internal/lazyre"
)

// Cloud resources, clusters, container volumes, databases, published
// packages and hosted repositories live outside this machine's files: no
// sandbox rolls back what a command does to them. Their tools delete or
// publish in one subcommand, so the facts name it. The sandbox stops them
// only while it keeps the command off the network (the proxy asks for each
// host) and away from the host's service sockets.

// serviceEffect is one destructive or public effect on a service.
type serviceEffect struct {
	level Level
	cat   Category
	fact  string
}

// serviceEffects grades prog's command; args are its arguments, ops its
// operands (flags removed).
func serviceEffects(prog string, args, ops []string) []serviceEffect {
	if hasFlag(args, "--help") || dryRun(args) {
		return nil // prints usage, or what it would do
	}
	var out []serviceEffect
	high := func(cat Category, format string, a ...any) {
		out = append(out, serviceEffect{High, cat, fmt.Sprintf(format, a...)})
	}
	medium := func(cat Category, format string, a ...any) {
		out = append(out, serviceEffect{Medium, cat, fmt.Sprintf(format, a...)})
	}
	at := func(words ...string) int { return wordsAt(ops, words...) }
	cmd := func(from, n int) string { // the subcommand as written, for the fact
		return prog + " " + strings.Join(ops[from:min(from+n, len(ops))], " ")
	}
	if fact := deploys(prog, args, ops); fact != "" {
		high(SystemModification, "%s", fact)
	}
	switch prog {
	case "docker", "podman", "nerdctl":
		switch {
		case at("volume", "rm") >= 0 || at("volume", "prune") >= 0:
			high(DataDeletion, "deletes container volumes and their data (%s)", cmd(at("volume"), 2))
		case at("system", "prune") >= 0:
			high(DataDeletion, "deletes unused containers, images, networks and build cache (%s system prune)", prog)
		case at("compose", "down") >= 0 && hasFlag(args, "-v", "--volumes"):
			high(DataDeletion, "deletes the project's containers and volumes (%s compose down -v)", prog)
		case len(ops) > 0 && (ops[0] == "rm" || ops[0] == "rmi"),
			at("container", "rm") >= 0, at("container", "prune") >= 0, at("image", "rm") >= 0, at("image", "prune") >= 0:
			medium(DataDeletion, "removes containers or images (%s)", cmd(0, 2))
		case len(ops) > 1 && (ops[0] == "push" || at("image", "push") == 0):
			image := ops[len(ops)-1]
			high(DataExfiltration, "publishes the image %s, and what was built into it, to %s (%s push)", image, imageRegistry(image), prog)
		case (at("build") >= 0 || at("buildx", "build") >= 0) && (hasFlag(args, "--push") || hasFlag(args, "--output=type=registry")):
			image := optionValue(args, "-t", "--tag")
			high(DataExfiltration, "publishes the image %s it builds, with the files it copies in, to %s (%s build --push)", image, imageRegistry(image), prog)
		}
	case "oras", "crane", "skopeo", "regctl":
		if len(ops) > 1 && (ops[0] == "push" || ops[0] == "copy" || ops[0] == "cp" || prog == "regctl" && at("image", "copy") == 0) {
			high(DataExfiltration, "publishes files or an image to a registry (%s)", cmd(0, 1))
		}
	case "kubectl", "oc":
		if i := slices.Index(ops, "delete"); i >= 0 {
			high(DataDeletion, "deletes Kubernetes resources (%s)", cmd(i, 3))
		}
		if at("run") == 0 && (hasFlag(args, "--privileged") || hasFlag(args, "--privileged=true")) {
			high(PrivilegeEscalation, "runs a privileged pod, with root on its node (%s run --privileged)", prog)
		}
		if len(ops) > 0 && kubectlChanges[ops[0]] || at("rollout", "restart") == 0 || at("rollout", "undo") == 0 {
			medium(SystemModification, "changes Kubernetes resources (%s)", cmd(0, 2))
		}
	case "helm":
		for _, sub := range []string{"uninstall", "delete", "del", "un"} {
			if i := at(sub); i == 0 {
				high(DataDeletion, "uninstalls a Helm release (%s)", cmd(i, 2))
				break
			}
		}
		if at("install") == 0 || at("upgrade") == 0 || at("rollback") == 0 {
			medium(SystemModification, "changes a Helm release in the cluster (%s)", cmd(0, 2))
		}
		if at("push") == 0 {
			high(DataExfiltration, "publishes a chart to a registry (helm push)")
		}
	case "terraform", "tofu", "terragrunt":
		switch {
		case at("destroy") >= 0 || at("apply") >= 0 && hasFlag(args, "-destroy", "--destroy"):
			high(DataDeletion, "destroys the infrastructure the configuration manages (%s destroy)", prog)
		case at("apply") >= 0 && hasFlagPrefix(args, "-auto-approve") || at("apply") >= 0 && hasFlagPrefix(args, "--auto-approve"):
			high(SystemModification, "changes infrastructure without a review (%s apply -auto-approve)", prog)
		}
	case "pulumi", "cdk", "cdktf", "sst":
		switch {
		case at("destroy") >= 0:
			high(DataDeletion, "destroys the stack's cloud resources (%s destroy)", prog)
		case prog == "pulumi" && at("up") == 0 && hasFlag(args, "--yes", "-y", "-f", "--skip-preview"),
			prog != "pulumi" && at("deploy") == 0 && (prog == "sst" || hasFlag(args, "--require-approval=never") || optionValue(args, "--require-approval", "--require-approval") == "never" || hasFlag(args, "--auto-approve")):
			high(SystemModification, "changes cloud resources without a review (%s)", cmd(0, 1))
		case at("up") == 0 || at("deploy") == 0:
			medium(SystemModification, "changes cloud resources after a review it shows (%s)", cmd(0, 1))
		}
	case "aws":
		if at("lambda", "update-function-code") >= 0 {
			high(SystemModification, "replaces the code of the Lambda function %s (aws lambda update-function-code)", optionValue(args, "--function-name", "--function-name"))
		}
		for i := 0; i+1 < len(ops); i++ {
			service, verb := ops[i], ops[i+1]
			if service == "s3" && (verb == "rm" || verb == "rb") || service == "s3" && verb == "sync" && hasFlag(args, "--delete") ||
				strings.HasPrefix(verb, "delete-") || strings.HasPrefix(verb, "terminate-") || strings.HasPrefix(verb, "remove-") ||
				strings.HasPrefix(verb, "deregister-") || strings.HasPrefix(verb, "purge-") {
				high(DataDeletion, "deletes AWS resources (%s)", cmd(i, 2))
				break
			}
		}
	case "gcloud", "az", "doctl", "flyctl", "fly", "heroku", "vercel", "netlify", "gsutil":
		for i, op := range ops {
			if op == "delete" || op == "destroy" || op == "purge" || prog == "gsutil" && (op == "rm" || op == "rb") ||
				strings.HasSuffix(op, ":destroy") || op == "rm" && (prog == "vercel" || prog == "fly" || prog == "flyctl") {
				high(DataDeletion, "deletes cloud resources (%s)", cmd(0, i+1))
				break
			}
		}
	case "gh", "glab":
		switch del := slices.Index(ops, "delete"); {
		case del >= 1:
			high(DataDeletion, "deletes data on the hosting service (%s)", cmd(del-1, 3))
		case at("repo", "archive") >= 0:
			medium(DataDeletion, "archives a repository (%s repo archive)", prog)
		case at("pr", "merge") >= 0 || at("mr", "merge") >= 0:
			bypass := ""
			if hasFlag(args, "--admin") {
				bypass = ", bypassing its branch protection (--admin)"
			}
			high(SystemModification, "merges a pull request on the hosting service%s (%s)", bypass, cmd(max(at("pr"), at("mr")), 3))
		case at("repo", "edit") >= 0 && strings.EqualFold(optionValue(args, "--visibility", "--visibility"), "public"):
			high(DataExfiltration, "makes the repository public (%s repo edit --visibility public)", prog)
		case at("repo", "create") >= 0 && hasFlag(args, "--public") && (hasFlagPrefix(args, "--source") || hasFlag(args, "--push")):
			high(DataExfiltration, "publishes this repository publicly (%s repo create --public)", prog)
		case at("release", "create") >= 0:
			medium(SystemModification, "publishes a release on the hosting service (%s release create)", prog)
		}
	case "npm", "pnpm", "yarn":
		switch {
		case at("unpublish") == 0:
			high(DataDeletion, "unpublishes a package from the registry (%s unpublish)", prog)
		case prog != "npm" && (at("publish") == 0 || at("npm", "publish") == 0) && !hasFlag(args, "--dry-run"):
			// (npm publish: see packages)
			high(DataExfiltration, "publishes the package to the registry, publicly (%s publish)", prog)
		case at("deprecate") == 0:
			medium(SystemModification, "deprecates a published package (%s deprecate)", prog)
		}
	case "cargo", "poetry", "uv", "gem", "twine", "flit", "hatch":
		// (cargo publish: see packages)
		if prog != "cargo" && (at("publish") == 0 || prog == "gem" && at("push") == 0 || prog == "twine" && at("upload") == 0) {
			if !hasFlag(args, "--dry-run") {
				high(DataExfiltration, "publishes the package to the registry, publicly (%s)", cmd(0, 1))
			}
		}
		if prog == "gem" && at("yank") == 0 || prog == "cargo" && at("yank") == 0 {
			medium(SystemModification, "yanks a published version (%s yank)", prog)
		}
	case "dropdb", "dropuser", "mysqladmin":
		if prog != "mysqladmin" || at("drop") >= 0 {
			high(DataDeletion, "drops a database or its user (%s)", strings.TrimSpace(cmd(0, 1)))
		}
	case "redis-cli", "valkey-cli":
		if c := redisCommand(args); strings.EqualFold(c, "FLUSHALL") || strings.EqualFold(c, "FLUSHDB") {
			high(DataDeletion, "deletes every key (%s %s)", prog, strings.ToUpper(c))
		}
	case "psql", "mysql", "mariadb", "clickhouse-client", "cockroach", "mongosh", "mongo":
		for _, a := range args {
			if kw := destructiveSQL(a); kw != "" {
				high(DataDeletion, "runs SQL that deletes data (%s)", kw)
				break
			}
		}
	case "git":
		if len(ops) > 0 && ops[0] == "rm" && hasForce(args) && !hasFlag(args, "--cached") {
			medium(DataDeletion, "deletes files with uncommitted changes (git rm -f)")
		}
	case "rsync":
		if hasFlagPrefix(args, "--delete") || hasFlag(args, "--del") {
			medium(DataDeletion, "deletes files at the destination that the source lacks (rsync --delete)")
		}
	}
	return out
}

// kubectlChanges are the kubectl subcommands that change resources in the
// cluster.
var kubectlChanges = map[string]bool{"apply": true, "create": true, "replace": true, "patch": true, "edit": true, "scale": true,
	"set": true, "label": true, "annotate": true, "taint": true, "cordon": true, "drain": true}

// dryRun says whether the command only reports what it would do
// (kubectl's --dry-run=client|server, helm's and others' --dry-run).
func dryRun(args []string) bool {
	for _, a := range args {
		if a == "--dry-run" || strings.HasPrefix(a, "--dry-run=") && a != "--dry-run=none" {
			return true
		}
	}
	return false
}

// destructiveSQL matches statements that delete data: DROP, TRUNCATE, and
// DELETE without a WHERE; MongoDB's drop calls.
var destructiveSQL = func() func(string) string {
	sql := lazyre.New(`(?is)\b(drop\s+(?:table|database|schema|index|view|collection|user)|truncate(?:\s+table)?)\b|\bdelete\s+from\s+[^\s;]+\s*(?:;|$)|\.(dropDatabase|drop|deleteMany)\(\s*(?:\{\s*\})?\s*\)`)
	return func(s string) string {
		lower := strings.ToLower(s)
		if !strings.Contains(lower, "drop") && !strings.Contains(lower, "truncate") && !strings.Contains(lower, "delete") {
			return ""
		}
		m := sql().FindString(s)
		return strings.Join(strings.Fields(strings.TrimSuffix(m, ";")), " ")
	}
}()

// redisCommand is the command redis-cli runs: its first word that is not
// an option or an option's value.
func redisCommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "-p" || a == "-s" || a == "-a" || a == "-u" || a == "-n" || a == "-r" || a == "-i" ||
			a == "-d" || a == "--user" || a == "--pass" || a == "--askpass" || a == "--cacert" || a == "--cert" || a == "--key" || a == "--sni":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

func hasForce(args []string) bool {
	for _, a := range args {
		if a == "--force" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f") {
			return true
		}
	}
	return false
}

// services records serviceEffects: stopped by a sandbox that keeps the
// command off the network and the host's sockets.
func (as *Assessor) services(prog string, args, ops []string) {
	for _, e := range serviceEffects(prog, args, ops) {
		as.stoppedIf(as.confined() && as.offline(), e.level, e.cat, e.fact)
	}
	as.localDatabase(prog, ops)
}

// localDatabase grades SQL run on a database file (`sqlite3 app.db 'DROP
// TABLE users'`): the data goes where the file is, which is most often the
// workspace, writable in the sandbox.
func (as *Assessor) localDatabase(prog string, ops []string) {
	if prog != "sqlite3" && prog != "duckdb" || len(ops) < 2 {
		return
	}
	for _, sql := range ops[1:] {
		if kw := destructiveSQL(sql); kw != "" {
			as.Add(Medium, DataDeletion, fmt.Sprintf("runs SQL that deletes data in %s (%s)", as.Display(as.abs(ops[0]), false), kw))
			return
		}
	}
}

// ---- commands run elsewhere ----

// sshCommand is what an ssh command line says: the destination's host
// (without its user), the command run there (none: a login shell) and the
// remote forwards it opens (-R).
type sshCommand struct {
	host           string
	remote         []string
	remoteForwards []string
}

// parseSSH walks ssh's options, whose values (-p 2222, -L and -R specs)
// are no destination. Like OpenSSH, it takes options after the
// destination too (`ssh host -p 2222 -N`): the command starts at the
// first word after it that is not one.
func parseSSH(args []string) sshCommand {
	var c sshCommand
	dest := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if dest == "" && i+1 < len(args) {
				dest, i = args[i+1], i+1
			}
			c.remote = args[i+1:]
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				if strings.IndexByte("BbcDEeFIiJLlmOoPpQRSWw", a[j]) < 0 {
					continue
				}
				v := a[j+1:]
				if v == "" && i+1 < len(args) {
					i++ // the option's value is the next word
					v = args[i]
				}
				if a[j] == 'R' {
					c.remoteForwards = append(c.remoteForwards, v)
				}
				break
			}
		case dest == "":
			dest = a
		default:
			c.remote = args[i:]
			i = len(args)
		}
	}
	if at := strings.LastIndex(dest, "@"); at >= 0 {
		dest = dest[at+1:]
	}
	c.host = dest
	return c
}

// execTarget splits `docker exec [OPTIONS] CONTAINER CMD...` and
// `kubectl exec POD [OPTIONS] -- CMD...` into where and what runs.
func execTarget(prog string, args []string) (where string, remote []string) {
	if prog == "kubectl" || prog == "oc" {
		dash := slices.Index(args, "--")
		if dash < 0 {
			return "", nil
		}
		pod := ""
		for i := 0; i < dash; i++ {
			switch a := args[i]; {
			case a == "-c" || a == "--container" || a == "-n" || a == "--namespace" || a == "-f" || a == "--filename" || a == "--context":
				i++
			case !strings.HasPrefix(a, "-") && pod == "":
				pod = a
			}
		}
		return "the pod " + pod, args[dash+1:]
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-e" || a == "--env" || a == "-u" || a == "--user" || a == "-w" || a == "--workdir" || a == "--env-file" || a == "--detach-keys":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return "the container " + a, args[i+1:]
		}
	}
	return "", nil
}

// remoteRun grades a command that runs on another machine, in a container
// or in a pod: no sandbox of this machine confines it, so only what is
// known to just read is not high risk. ssh hands its words, joined, to the
// remote shell; exec runs them as they are.
func (as *Assessor) remoteRun(where string, remote []string, viaShell bool) {
	if len(remote) == 0 {
		return
	}
	argv := remote
	if viaShell {
		argv = []string{"sh", "-c", strings.Join(remote, " ")}
	}
	shown := command.Display(argv)
	for _, w := range remote {
		for _, f := range strings.Fields(w) {
			// In a container, /run/secrets/NAME is Docker's and Compose's
			// secrets as well.
			if f = strings.Trim(f, `"'`); isSecretPath(f) || strings.HasPrefix(f, "/run/secrets/") {
				// Its output comes back here, to the agent.
				as.readsSecret(fmt.Sprintf("%s on %s", f, where))
			}
		}
	}
	if safe.KnownSafe(command.Analyze(argv)) {
		as.Add(Medium, NetworkAccess, fmt.Sprintf("runs `%s` on %s", shown, where))
		return
	}
	as.stoppedIf(as.confined() && as.offline(), High, SystemModification,
		fmt.Sprintf("runs commands on %s, where no sandbox confines them: `%s`", where, shown))
}

// httpDelete says which host a DELETE request goes to, or "".
func httpDelete(prog string, args []string) string {
	method, host := "", ""
	for i, a := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case (prog == "curl" || prog == "gh") && (a == "-X" || a == "--request" || a == "--method"):
			method = next
		case prog == "curl" && strings.HasPrefix(a, "-X") && len(a) > 2:
			method = a[2:]
		case strings.HasPrefix(a, "--request=") || strings.HasPrefix(a, "--method="):
			method = a[strings.IndexByte(a, '=')+1:]
		case prog == "wget" && a == "--method":
			method = next
		case (prog == "http" || prog == "https" || prog == "xh") && method == "" && !strings.HasPrefix(a, "-"):
			method = a // httpie: METHOD URL
			if strings.ToUpper(a) != a {
				method = "GET"
			}
		}
		if h := urlHost(a); h != "" && host == "" {
			host = h
		}
	}
	if !strings.EqualFold(method, "DELETE") {
		return ""
	}
	switch {
	case prog == "gh":
		return "api.github.com"
	case host != "":
		return host
	}
	for _, op := range Operands(args) { // httpie: `http DELETE api.example.com/x`
		if op != method && strings.Contains(op, ".") {
			h, _, _ := strings.Cut(op, "/")
			return h
		}
	}
	return "a server"
}

// remoteLevel is the risk of sending something destructive or private to
// host: high, but medium for this machine's own loopback (the server the
// agent is building).
func remoteLevel(host string) Level {
	if where, _ := HostReach(host); strings.HasPrefix(where, "this machine (") {
		return Medium
	}
	return High
}

// remoteEffects records commands run elsewhere and DELETE requests.
func (as *Assessor) remoteEffects(prog string, args, ops []string) {
	switch prog {
	case "ssh":
		if c := parseSSH(args); c.host != "" {
			as.remoteRun(c.host, c.remote, true)
		}
	case "docker", "podman", "nerdctl", "kubectl", "oc":
		if len(ops) > 0 && ops[0] == "exec" {
			rest := args[slices.Index(args, "exec")+1:]
			if where, remote := execTarget(prog, rest); where != "" {
				as.remoteRun(where, remote, false)
			}
		}
	case "ansible", "ansible-playbook":
		if !hasFlag(args, "--check", "-C", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--version") {
			as.stoppedIf(as.confined() && as.offline(), High, SystemModification,
				fmt.Sprintf("runs Ansible tasks on remote hosts (%s)", prog))
		}
	}
	if host := httpDelete(prog, args); host != "" {
		// A local server is most often the one the agent is building.
		as.stoppedIf(as.confined() && as.offline(), remoteLevel(host), DataDeletion,
			fmt.Sprintf("sends a DELETE request to %s", host))
	}
}

// deploys says what a hosting tool's command puts live: the workspace's
// code published at the service's production address, where everyone
// reaches it (a preview deploy, at an address of its own, is not); "" for
// none.
func deploys(prog string, args, ops []string) string {
	at := func(words ...string) int { return wordsAt(ops, words...) }
	prod := hasFlag(args, "--prod", "--production")
	switch {
	case prog == "vercel" && prod && (len(ops) == 0 || ops[0] == "deploy"):
		return "deploys to production on Vercel (vercel --prod)"
	case prog == "netlify" && at("deploy") == 0 && prod:
		return "deploys to production on Netlify (netlify deploy --prod)"
	case (prog == "fly" || prog == "flyctl") && at("deploy") == 0:
		return "deploys the app on Fly.io (" + prog + " deploy)"
	case prog == "firebase" && at("deploy") == 0:
		return "deploys to Firebase (firebase deploy)"
	case prog == "wrangler" && (at("deploy") == 0 || at("publish") == 0):
		return "deploys the Worker on Cloudflare (wrangler " + ops[0] + ")"
	case prog == "railway" && at("up") == 0:
		return "deploys the project on Railway (railway up)"
	case (prog == "serverless" || prog == "sls" || prog == "sam" || prog == "eb") && at("deploy") == 0:
		return "deploys the service (" + prog + " deploy)"
	case prog == "gcloud" && (at("run", "deploy") == 0 || at("app", "deploy") == 0 || at("functions", "deploy") == 0):
		return "deploys to Google Cloud (gcloud " + ops[0] + " deploy)"
	}
	return ""
}
