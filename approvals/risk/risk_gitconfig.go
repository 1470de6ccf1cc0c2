package risk

import (
	"fmt"
	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitOneShot records the keys a git command sets for itself: those that
// run a program of the command's choosing or weaken a check are high risk
// (the program is not analysed); Warden's own hardening values
// (core.fsmonitor=, core.hooksPath=/dev/null, core.pager=cat) are not.
func (as *Assessor) gitOneShot(args []string) {
	for _, s := range gitfacts.ConfigOptions(args) {
		as.remoteRedirect(s.Key, s.Value, s.Text)
		switch s.Risk {
		case gitfacts.ConfigRuns:
			as.Add(High, SystemModification, "makes git run a program Warden cannot analyse ("+s.Text+")")
		case gitfacts.ConfigWeakens:
			// For this command only, inside its sandbox: what the check
			// guarded (local files, the network) the sandbox still guards,
			// except a fetch whose TLS or destination changed while the
			// network is on.
			section, _, _ := gitfacts.SplitConfigKey(s.Key)
			stops := as.confined() && (as.offline() || section != "http" && section != "https" && section != "url")
			as.stoppedIf(stops, High, SystemModification, gitfacts.Weakens(s.Key)+" ("+s.Text+")")
		}
	}
}

// gitConfigCommand judges `git config ...` run in gitCwd: reads are
// nothing; a write is medium, high when the key runs a program or weakens
// a check, and a write outside the writable roots (--global, --system,
// --file) is judged as any such write. The sandbox holds the repository's
// own config read-only, so there it stops the write; without a sandbox the
// program runs on the host the next time git does.
func (as *Assessor) gitConfigCommand(gitCwd string, args []string) {
	var ops []string
	scope, file, mode := "", "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasEq := strings.Cut(a, "=")
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "--global" || a == "--system" || a == "--local" || a == "--worktree":
			scope = a
		case (a == "-f" || a == "--file") && i+1 < len(args):
			i++
			file = args[i]
		case name == "--file" && hasEq:
			file = val
		case strings.HasPrefix(a, "-f") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			file = a[2:]
		case (a == "--blob" || a == "--type" || a == "--default" || a == "--comment" || a == "--value" || a == "--url" || a == "-t") && i+1 < len(args):
			i++
			if a == "--blob" {
				mode = "read"
			}
		case strings.HasPrefix(a, "--get") || a == "-l" || a == "--list" || name == "--blob":
			mode = "read"
		case a == "--unset" || a == "--unset-all":
			mode = "unset"
		case a == "--remove-section" || a == "--rename-section":
			mode = "section"
		case a == "-e" || a == "--edit":
			mode = "edit"
		case a == "--add" || a == "--replace-all":
			mode = "write"
		case strings.HasPrefix(a, "-"):
		case len(ops) == 0 && mode == "" && gitfacts.ConfigVerbs[a] != "":
			mode = gitfacts.ConfigVerbs[a] // git 2.46: options may follow the verb
		default:
			// The key: git stops reading options there, so a value may
			// begin with a dash (`alias.l '-c core.pager=x log'`).
			ops = append(ops, args[i:]...)
			i = len(args)
		}
	}
	if mode == "" {
		mode = "read"
		if len(ops) >= 2 {
			mode = "write"
		}
	}
	if mode == "read" {
		return
	}
	target := as.gitConfigTarget(gitCwd, scope, file)
	if target != "" && as.beyondSandbox(target) {
		as.writes(target, false) // ~/.gitconfig, /etc/gitconfig: outside the workspace
	}
	stops := as.confined() && (target == "" || as.beyondSandbox(target) || gitfacts.ObeyedPath(target))
	where := "git configuration"
	if target != "" {
		where = as.Display(target, false)
	}
	key, value := "", ""
	if len(ops) > 0 {
		key = ops[0]
	}
	if len(ops) > 1 {
		value = ops[1]
	}
	switch mode {
	case "write":
		switch gitfacts.ConfigKeyRisk(key, value, true) {
		case gitfacts.ConfigRuns:
			as.stoppedIf(stops, High, SystemModification, fmt.Sprintf("makes git run a program from now on, outside any sandbox: %s = %s (%s)", key, quoteValue(value), where))
			return
		case gitfacts.ConfigWeakens:
			as.stoppedIf(stops, High, SystemModification, fmt.Sprintf("%s from now on: %s = %s (%s)", gitfacts.Weakens(key), key, quoteValue(value), where))
			return
		}
		as.stoppedIf(stops, Medium, "", fmt.Sprintf("changes git configuration: %s (%s)", key, where))
	case "edit":
		as.stoppedIf(stops, Medium, "", "edits git configuration in an editor ("+where+")")
	default:
		as.stoppedIf(stops, Medium, "", fmt.Sprintf("removes git configuration %s (%s)", strings.Join(ops, " "), where))
	}
}

// gitConfigTarget is the file a `git config` write changes ("" when the
// repository's cannot be found: the local config of a repository that
// does not exist yet).
func (as *Assessor) gitConfigTarget(gitCwd, scope, file string) string {
	switch {
	case file != "":
		return as.absFrom(gitCwd, file)
	case scope == "--global":
		if as.ctx.Home == "" {
			return ""
		}
		return filepath.Join(as.ctx.Home, ".gitconfig")
	case scope == "--system":
		return "/etc/gitconfig"
	}
	if _, err := os.Stat(gitCwd); err != nil {
		return "" // made by the command itself (`git init sub && git -C sub config ...`)
	}
	cfg := gitfacts.ConfigPath(gitCwd)
	if cfg != "" && scope == "--worktree" {
		cfg = filepath.Join(filepath.Dir(cfg), "config.worktree")
	}
	return cfg
}

// gitFileWrite flags writes to what git obeys: a git dir's config, hooks
// and attributes (high: git runs what they name, later, on the host), a
// work tree's .gitattributes and .gitmodules (medium: they pick the drivers
// and submodules the configuration defines).
func (as *Assessor) gitFileWrite(p string) {
	if filepath.Base(p) == ".git" && !as.mkdir {
		// A .git file names the git dir git uses: its config, its hooks.
		as.stoppedIf(as.confined(), High, SystemModification, "points git at another repository's configuration and hooks: "+as.Display(p, false))
		return
	}
	if gitfacts.ObeyedPath(p) {
		stops := as.confined()
		as.stoppedIf(stops, High, SystemModification, "writes what makes git run programs: "+as.Display(p, false))
		return
	}
	switch filepath.Base(p) {
	case ".gitattributes":
		as.Add(Medium, "", "writes "+as.Display(p, false)+" (it picks the filter, diff and merge drivers git runs)")
	case ".gitmodules":
		as.Add(Medium, "", "writes "+as.Display(p, false)+" (submodule URLs git fetches)")
	case ".lfsconfig":
		as.Add(Medium, "", "writes "+as.Display(p, false)+" (where git lfs sends the large files on a push)")
	}
}

// gitEnvironment judges git's variables set in the command line (code and
// nested scripts, not quoted text): GIT_CONFIG_KEY_n/VALUE_n pairs as the
// key they set, the program variables by their value.
func (as *Assessor) gitEnvironment(code, raw string) {
	if !strings.Contains(code, "GIT_") {
		return // every name the pattern matches starts so
	}
	for _, m := range gitfacts.EnvName().FindAllStringSubmatch(code, -1) {
		name := m[1]
		value, known := gitfacts.EnvValue(raw, name)
		var r gitfacts.ConfigRisk
		switch {
		case name == "GIT_CONFIG_COUNT" || strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
			continue // judged with its key
		case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
			v, vk := gitfacts.EnvValue(raw, "GIT_CONFIG_VALUE_"+strings.TrimPrefix(name, "GIT_CONFIG_KEY_"))
			r = gitfacts.ConfigKeyRisk(value, v, known && vk)
			if known && vk {
				as.remoteRedirect(value, v, name+"="+value)
			}
		case name == "GIT_CONFIG_PARAMETERS":
			r = gitfacts.ConfigRuns // not parsed: fail closed
		case name == "GIT_CONFIG" || name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_TEMPLATE_DIR" || name == "GIT_EXEC_PATH":
			if !known || value != "/dev/null" {
				r = gitfacts.ConfigRuns // a file or directory git obeys
			}
		case name == "GIT_SSL_NO_VERIFY" || name == "GIT_SSL_CAINFO" || name == "GIT_SSL_CAPATH":
			r = gitfacts.ConfigWeakens
		case name == "GIT_EDITOR" || name == "GIT_SEQUENCE_EDITOR":
			r = gitfacts.ConfigRuns
			if known {
				r = gitfacts.EditorValueRisk(value)
			}
		default:
			r = gitfacts.ConfigRuns
			if known {
				r = gitfacts.ProgramValueRisk(value)
			}
		}
		switch r {
		case gitfacts.ConfigRuns:
			as.Add(High, SystemModification, "makes git run a program or read a configuration Warden cannot analyse ("+name+")")
		case gitfacts.ConfigWeakens:
			as.Add(High, SystemModification, "weakens git's checks ("+name+")")
		}
	}
}

// remoteRedirect judges a remote's URL set for one command (-c
// remote.origin.pushurl=URL, GIT_CONFIG_KEY_n): the command's pushes and
// fetches go there, and one that is none of the repository's remotes is
// where a copy of it would be pushed.
func (as *Assessor) remoteRedirect(key, value, text string) {
	section, sub, name := gitfacts.SplitConfigKey(key)
	if section != "remote" || sub == "" || name != "url" && name != "pushurl" {
		return
	}
	if repo := gitfacts.URLRepo(value); repo != "" && !slices.Contains(gitfacts.RemoteRepos(as.ctx.Cwd), repo) {
		as.stoppedIf(as.offline(), High, DataExfiltration, fmt.Sprintf("sends the remote %q's pushes to %s, which is not one of its remotes (%s)", sub, repo, text))
	}
}

// quoteValue shows a config value in a fact, shortened.
func quoteValue(v string) string {
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return fmt.Sprintf("%q", v)
}
