package risk

import (
	"fmt"
	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"slices"
	"strings"
)

// gh talks to GitHub's API with the user's token (or one the command line
// gives it): every command but the local ones contacts GitHub, and a few
// send the workspace's files there. Posting to the workspace's own
// repository is everyday work (a pull request's body from a file); posting
// a file, or anything, to another repository or to a gist hands it out.

// ghValueFlags are gh's options that take a value, across its commands.
var ghValueFlags = map[string]bool{
	"-R": true, "--repo": true, "-t": true, "--title": true, "-b": true, "--body": true, "-F": true,
	"--body-file": true, "-a": true, "--assignee": true, "-l": true, "--label": true, "-m": true,
	"--milestone": true, "-p": true, "--project": true, "-B": true, "--base": true, "-H": true,
	"--head": true, "-X": true, "--method": true, "-f": true, "--raw-field": true, "--field": true,
	"--input": true, "-q": true, "--jq": true, "--template": true, "--hostname": true, "-n": true,
	"--notes": true, "--notes-file": true, "--target": true, "-d": true, "--desc": true, "-r": true,
	"--reviewer": true, "-e": true, "--env": true, "-c": true, "--cache": true, "--json": true,
	"--visibility": true, "--filename": true, "-D": true, "--description": true,
}

// ghLocal are gh's commands that stay on this machine.
var ghLocal = map[string]bool{"help": true, "version": true, "completion": true, "alias": true, "config": true}

// ghCall is what a gh command line says.
type ghCall struct {
	cmd      []string // the command words: "issue", "create"
	ops      []string // every operand, the command words first
	repo     string   // -R/--repo, as written
	method   string   // gh api's -X
	endpoint string   // gh api's endpoint
	fields   []string // gh api's fields (-f/-F KEY=VALUE): it POSTs by default
	files    []string // files it sends: -F/--body-file FILE, --input FILE, -F key=@FILE, release upload's assets
}

func parseGh(args []string) ghCall {
	var c ghCall
	var ops []string
	api := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, inline := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name, value, inline = a, "", false
			if len(a) > 2 && a[0] == '-' && ghValueFlags[a[:2]] {
				name, value, inline = a[:2], a[2:], true // -Rowner/repo
			}
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			ops = append(ops, a)
			if len(ops) == 1 && a == "api" {
				api = true
			} else if api && c.endpoint == "" {
				c.endpoint = a
			}
			continue
		}
		if !ghValueFlags[name] {
			continue
		}
		if !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch {
		case name == "-R" || name == "--repo":
			c.repo = value
		case api && (name == "-X" || name == "--method"):
			c.method = strings.ToUpper(value)
		case api && (name == "-F" || name == "--field" || name == "-f" || name == "--raw-field"):
			c.fields = append(c.fields, value)
			if _, v, ok := strings.Cut(value, "="); ok && (name == "-F" || name == "--field") && strings.HasPrefix(v, "@") {
				c.files = append(c.files, v[1:])
			}
		case name == "--input" || name == "--body-file" || name == "--notes-file" || !api && name == "-F":
			c.files = append(c.files, value)
		}
	}
	c.cmd, c.ops = ops[:min(2, len(ops))], ops
	if len(ops) > 2 && len(c.cmd) == 2 && c.cmd[0] == "release" && c.cmd[1] == "upload" {
		for _, asset := range ops[3:] { // TAG, then the assets (FILE#label)
			f, _, _ := strings.Cut(asset, "#")
			c.files = append(c.files, f)
		}
	}
	return c
}

// ghPosts are the commands that write to a repository on GitHub.
var ghPosts = map[string]bool{
	"issue create": true, "issue comment": true, "issue edit": true, "pr create": true, "pr comment": true,
	"pr edit": true, "pr review": true, "release create": true, "release upload": true, "release edit": true,
	"discussion create": true, "secret set": true, "variable set": true,
}

// gh records what a gh command sends to GitHub, and where.
func (as *Assessor) gh(args []string) {
	c := parseGh(args)
	if len(c.cmd) == 0 || ghLocal[c.cmd[0]] || hasFlag(args, "-h", "--help") {
		return
	}
	host := "github.com"
	as.contacts(host, Medium)
	expose := func(fact string) { as.stoppedIf(as.offline(), High, DataExfiltration, fact) }
	sent := func(to string) {
		for _, f := range c.files {
			if f == "-" {
				continue
			}
			expose(fmt.Sprintf("uploads %s to %s", as.Display(as.abs(f), false), to))
			as.Reads(f)
		}
	}
	if strings.Join(c.cmd, " ") == "repo create" && hasFlag(args, "--push") {
		// A new repository is none of the remotes, private or not: with a
		// token on the line, the attacker's.
		name := "a new repository on GitHub"
		switch {
		case len(c.ops) > 2 && strings.Contains(c.ops[2], "/"):
			name = ghRepo(c.ops[2], host) + ", a new repository"
		case len(c.ops) > 2:
			name = "a new repository " + c.ops[2] + " on GitHub"
		}
		expose(fmt.Sprintf("pushes the repository to %s (gh repo create --push)", name))
	}
	own := gitfacts.RemoteRepos(as.ctx.Cwd)
	if c.cmd[0] == "api" {
		target := ghEndpointRepo(c.endpoint)
		if target == "{owner}/{repo}" || slices.Contains(own, host+"/"+target) {
			return // the workspace's own repository
		}
		method := c.method
		if method == "" && (len(c.fields) > 0 || len(c.files) > 0) {
			method = "POST"
		}
		if c.endpoint == "graphql" && !ghMutation(c.fields) {
			return // a query: GraphQL reads by POST too
		}
		if (method == "" || method == "GET" || method == "HEAD") && len(c.files) == 0 {
			return // a read
		}
		where := "github.com/" + target
		if target == "" {
			where = "GitHub (" + c.endpoint + ")"
		}
		sent(where)
		expose(fmt.Sprintf("sends data to %s, outside this repository (gh api -X %s %s)", where, method, c.endpoint))
		return
	}
	if !ghPosts[strings.Join(c.cmd, " ")] || c.repo == "" {
		return // the workspace's own repository, or a read
	}
	repo := ghRepo(c.repo, host)
	if slices.Contains(own, repo) {
		return
	}
	sent(repo)
	expose(fmt.Sprintf("posts to %s, which is not one of its remotes (gh %s -R)", repo, strings.Join(c.cmd, " ")))
}

// ghMutation says whether gh api graphql's fields hold a mutation (or a
// query it cannot see: one read from a file).
func ghMutation(fields []string) bool {
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		if k != "query" {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "@") || strings.HasPrefix(v, "mutation") {
			return true
		}
	}
	return false
}

// ghRepo is -R's value as gitfacts.URLRepo reads a remote: [HOST/]OWNER/REPO or a
// URL.
func ghRepo(r, host string) string {
	if !strings.Contains(r, "://") && !strings.Contains(r, "@") {
		if strings.Count(r, "/") < 2 {
			r = host + "/" + r
		}
		r = "https://" + r
	}
	return gitfacts.URLRepo(r)
}

// ghEndpointRepo is the OWNER/REPO an API endpoint is about
// (repos/OWNER/REPO/...), in lower case; "" for one about no repository
// (gists, user, graphql).
func ghEndpointRepo(endpoint string) string {
	parts := strings.Split(strings.Trim(endpoint, "/"), "/")
	if len(parts) >= 3 && parts[0] == "repos" {
		return strings.ToLower(parts[1] + "/" + parts[2])
	}
	return ""
}
