package risk

import (
	"fmt"
	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"os"
	"slices"
	"strings"
)

// git grades a git command: what it does to the history, the remote and
// the working tree, and which host it contacts.
func (as *Assessor) git(args []string) {
	// Walk the global options (-C, --exec-path=) to the subcommand; the
	// -c and --config-env ones are judged by gitOneShot.
	i := 0
	gitCwd := as.ctx.Cwd
	as.gitOneShot(args)
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if strings.HasPrefix(args[i], "--exec-path=") {
			as.Add(High, SystemModification, "makes git run its commands from another directory ("+args[i]+")")
		}
		if gitfacts.ValueOption(args[i]) && i+1 < len(args) {
			if args[i] == "-C" {
				gitCwd = as.absFrom(as.ctx.Cwd, args[i+1])
			}
			i++
		}
		i++
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	switch sub {
	case "config":
		as.gitConfigCommand(gitCwd, rest)
	case "push":
		force, repoOpt := false, ""
		var refs []string
		for _, a := range rest {
			switch {
			case a == "-f" || a == "--force" || strings.HasPrefix(a, "--force-with-lease") || a == "--force-if-includes" || a == "--mirror":
				force = true
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'f'):
				force = true
			case a == "-d" || a == "--delete":
				as.stoppedIf(as.offline(), High, HistoryRewrite, "deletes remote branches (git push --delete)")
			case !strings.HasPrefix(a, "-"):
				refs = append(refs, a)
			case strings.HasPrefix(a, "--repo="):
				repoOpt = strings.TrimPrefix(a, "--repo=")
			}
		}
		for _, r := range refs[min(1, len(refs)):] {
			if strings.HasPrefix(r, "+") {
				force = true
			}
			if strings.HasPrefix(r, ":") {
				as.stoppedIf(as.offline(), High, HistoryRewrite, "deletes remote branches (git push "+r+")")
			}
		}
		if force {
			as.stoppedIf(as.offline(), High, HistoryRewrite, "rewrites remote history (git push --force)")
		}
		remote := "origin"
		if len(refs) > 0 {
			remote = refs[0]
		} else if repoOpt != "" {
			remote = repoOpt // --repo: the remote when none is named
		}
		// A URL, or a remote the line itself points at one: its commits go
		// wherever the command says, unless that is one of the
		// repository's remotes.
		// Compared by repository, not host: the likeliest place to push a
		// copy to is another repository on the same forge
		// (https://TOKEN@github.com/attacker/loot).
		url, how := remote, "which is not one of its remotes"
		if u, ok := as.repointed[remote]; ok {
			url, how = u, fmt.Sprintf("where this command points the remote %q", remote)
		}
		if repo := gitfacts.URLRepo(url); repo != "" && !slices.Contains(gitfacts.RemoteRepos(gitCwd), repo) {
			as.stoppedIf(as.offline(), High, DataExfiltration, fmt.Sprintf("pushes the repository to %s, %s", repo, how))
		}
		as.contactsRemote(gitCwd, url)
	case "fetch", "pull", "ls-remote", "remote":
		if sub == "remote" && len(rest) > 0 && (rest[0] == "add" || rest[0] == "set-url") {
			// `git remote add NAME URL`, `git remote set-url NAME URL`:
			// a push to NAME later in the line goes to URL.
			if ops := Operands(rest[1:]); len(ops) >= 2 {
				if as.repointed == nil {
					as.repointed = map[string]string{}
				}
				as.repointed[ops[0]] = ops[1]
			}
		}
		if sub == "remote" && (len(rest) == 0 || rest[0] != "update") {
			return
		}
		remote := "origin"
		if ops := Operands(rest); len(ops) > 0 && sub != "remote" {
			remote = ops[0]
		}
		if u, ok := as.repointed[remote]; ok {
			remote = u // the URL this line gave it
		}
		as.contactsRemote(gitCwd, remote)
	case "clone", "submodule":
		if sub == "submodule" && len(rest) > 0 && rest[0] == "deinit" && (slices.Contains(rest, "-f") || slices.Contains(rest, "--force") || slices.Contains(rest, "--all")) {
			as.Add(Medium, DataDeletion, "removes submodules' working trees with their local changes (git submodule deinit)")
		}
		for _, a := range Operands(rest) {
			if h := gitURLHost(a); h != "" {
				as.contacts(h, Medium)
				return
			}
		}
		if sub == "submodule" && slices.Contains(rest, "update") {
			as.Add(Medium, NetworkAccess, "fetches submodules from their remotes")
		}
	case "reset":
		if slices.Contains(rest, "--hard") {
			as.Add(High, DataDeletion, "discards uncommitted changes (git reset --hard)")
		} else {
			as.Add(Medium, HistoryRewrite, "moves the branch head (git reset)")
		}
	case "clean":
		for _, a := range rest {
			if a == "--force" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'f') {
				as.Add(High, DataDeletion, "deletes untracked files (git clean -f)")
				break
			}
		}
	case "checkout", "restore", "switch":
		as.gitDiscard(sub, rest)
	case "filter-repo":
		// It expires the reflog and prunes at once: no way back.
		as.Add(High, HistoryRewrite, "rewrites all history and prunes the old commits (git filter-repo)")
	case "filter-branch":
		if slices.Contains(rest, "-f") || slices.Contains(rest, "--force") {
			as.Add(High, HistoryRewrite, "rewrites history over the previous backup refs (git filter-branch --force)")
		} else {
			as.Add(Medium, HistoryRewrite, "rewrites local history (git filter-branch)")
		}
	case "rebase":
		as.Add(Medium, HistoryRewrite, "rewrites local history (git rebase)")
	case "commit":
		if slices.Contains(rest, "--amend") {
			as.Add(Medium, HistoryRewrite, "rewrites the last commit (git commit --amend)")
		}
	case "branch":
		if slices.Contains(rest, "-D") || slices.Contains(rest, "--delete") && slices.Contains(rest, "--force") {
			as.Add(Medium, HistoryRewrite, "deletes branches with unmerged commits (git branch -D)")
		}
		if slices.Contains(rest, "-M") || slices.Contains(rest, "-C") || (slices.Contains(rest, "--move") || slices.Contains(rest, "--copy")) && slices.Contains(rest, "--force") {
			as.Add(Medium, HistoryRewrite, "renames or copies a branch over an existing one (git branch -M)")
		}
	case "tag":
		if slices.Contains(rest, "-d") || slices.Contains(rest, "--delete") {
			// A tag has no reflog: its commit is found again only by its hash.
			as.Add(Medium, HistoryRewrite, "deletes tags (git tag -d)")
		}
	case "update-ref":
		if slices.Contains(rest, "-d") {
			as.Add(Medium, HistoryRewrite, "deletes a ref (git update-ref -d)")
		}
	case "worktree":
		if len(rest) > 0 && rest[0] == "remove" {
			if slices.Contains(rest, "-f") || slices.Contains(rest, "--force") {
				as.Add(Medium, DataDeletion, "removes a linked worktree with its uncommitted changes (git worktree remove --force)")
			} else {
				as.Add(Medium, DataDeletion, "removes a linked worktree (git worktree remove)")
			}
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			as.Add(Medium, DataDeletion, "drops stashed changes (git stash "+rest[0]+")")
		}
	case "reflog":
		// Expiring or deleting reflog entries drops the only way back to
		// commits no branch holds any more.
		if len(rest) > 0 && (rest[0] == "expire" || rest[0] == "delete") {
			as.Add(Medium, HistoryRewrite, "drops reflog entries, the way back to lost commits (git reflog "+rest[0]+")")
		}
	case "gc":
		// Pruning now deletes unreachable commits at once, instead of after
		// git's two-week grace period.
		for _, a := range rest {
			if a == "--prune=now" || a == "--prune=all" {
				as.Add(Medium, HistoryRewrite, "deletes unreachable commits now (git gc "+a+")")
				break
			}
		}
	case "prune":
		// Without --expire, git prune deletes every unreachable object.
		as.Add(Medium, HistoryRewrite, "deletes unreachable commits (git prune)")
	}
}

func (as *Assessor) contactsRemote(dir, remote string) {
	if h := GitRemoteHost(dir, remote); h != "" {
		as.contacts(h, Medium)
		return
	}
	as.Add(Medium, NetworkAccess, fmt.Sprintf("contacts the git remote %q (its host is unknown)", remote))
}

// gitRemoteHost reads the URL of remote from the repository containing dir
// and returns its host ("" when unknown).
func GitRemoteHost(dir, remote string) string {
	if h := gitURLHost(remote); h != "" {
		return h
	}
	for _, e := range gitfacts.RemoteURLs(dir) {
		if e.Sub == remote && e.Key == "url" {
			return gitURLHost(e.Value)
		}
	}
	return ""
}

func gitURLHost(s string) string {
	if h := urlHost(s); h != "" {
		return h
	}
	if strings.Contains(s, "@") {
		if m := gitfacts.ScpLikeURL().FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	return ""
}

// gitDiscard reports checkouts and restores that overwrite uncommitted
// changes in the working tree: `git checkout -- FILE`, `git checkout .`,
// `git restore FILE`, `git checkout -f`, `git switch --discard-changes`.
// Switching or creating a branch (`git checkout -b x`) keeps them.
func (as *Assessor) gitDiscard(sub string, args []string) {
	var files []string
	force, stagedOnly, worktree := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-f" || a == "--force" || a == "--discard-changes":
			force = true
		case a == "-S" || a == "--staged":
			stagedOnly = true
		case a == "-W" || a == "--worktree":
			worktree = true
		case (a == "-s" || a == "--source" || a == "-b" || a == "-B" || a == "-c" || a == "-C" || a == "--orphan") && i+1 < len(args):
			i++ // the option's value
		case strings.HasPrefix(a, "-"):
		case sub == "restore":
			files = append(files, a)
		case a == "." || sub == "checkout" && as.exists(a):
			// `git checkout main` switches branches; an operand that is a
			// file in the working tree is checked out over its changes.
			files = append(files, a)
		}
	}
	if sub == "restore" && stagedOnly && !worktree {
		return // only unstages: the working tree keeps its changes
	}
	switch {
	case len(files) > 0:
		shown := files
		if len(shown) > 3 {
			shown = append(append([]string(nil), shown[:3]...), fmt.Sprintf("+%d more", len(files)-3))
		}
		as.Add(Medium, DataDeletion, fmt.Sprintf("discards uncommitted changes to %s (git %s)", strings.Join(shown, ", "), sub))
	case force:
		as.Add(Medium, DataDeletion, fmt.Sprintf("discards uncommitted changes (git %s --force)", sub))
	}
}

func (as *Assessor) exists(p string) bool {
	info, err := os.Stat(as.abs(p))
	return err == nil && info.Mode().IsRegular()
}
