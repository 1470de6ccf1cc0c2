package risk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/lazyre"
)

// Git configuration can make git run programs (pagers, editors, hooks,
// diff, merge and filter drivers, credential helpers, `!` aliases...), pull
// in other files (include.path) or weaken what git checks (TLS, transport
// protocols, safe.directory, URL rewrites). A write of such a key persists:
// git runs the program later, on the host, outside any sandbox. `git -c`,
// --config-env and the GIT_CONFIG_* variables set one for a single command.

// configRisk grades one key = value.
type configRisk int

const (
	configPlain   configRisk = iota // a setting like any other
	configRuns                      // names a program git runs, or a file it obeys
	configWeakens                   // turns off a check git makes
)

// knownPrograms are pagers, editors and tools whose name as a config value
// (with plain options) runs nothing the command chose: `core.editor vim`,
// `core.pager less -R`, `merge.ours.driver true`.
var knownPrograms = map[string]bool{
	"cat": true, "less": true, "more": true, "most": true, "bat": true, "delta": true, "diff-so-fancy": true,
	"true": true, "false": true, ":": true,
	"vi": true, "vim": true, "nvim": true, "nano": true, "emacs": true, "emacsclient": true, "code": true, "subl": true,
	"vimdiff": true, "nvimdiff": true, "meld": true, "kdiff3": true, "opendiff": true,
	"gpg": true, "gpg2": true, "ssh-keygen": true, "ssh": true, "git-upload-pack": true, "git-receive-pack": true,
}

// programValueRisk grades a value git runs as a program (through the shell
// when it holds shell syntax).
func programValueRisk(v string) configRisk {
	v = strings.TrimSpace(v)
	if v == "" {
		return configPlain // no program: git's default, or none
	}
	if strings.ContainsAny(v, ";|&$`<>(){}!\\\n'\"*?") {
		return configRuns
	}
	words := strings.Fields(v)
	prog := words[0]
	if strings.Contains(prog, "/") {
		dir := filepath.Dir(prog)
		if dir != "/usr/bin" && dir != "/bin" && dir != "/usr/local/bin" {
			return configRuns // a script the command may have written
		}
		prog = filepath.Base(prog)
	}
	if !knownPrograms[prog] {
		return configRuns
	}
	if prog == "ssh" {
		for _, w := range words[1:] {
			lw := strings.ToLower(w)
			switch {
			case strings.Contains(lw, "proxycommand") || strings.Contains(lw, "localcommand") || strings.Contains(lw, "knownhostscommand"):
				return configRuns
			case strings.Contains(lw, "stricthostkeychecking=no") || strings.Contains(lw, "userknownhostsfile=/dev/null"):
				return configWeakens
			}
		}
	}
	return configPlain
}

// falsy: git's spellings of false.
func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

// gitBool: a value that is a boolean or empty (for keys taking a boolean or
// a program, a boolean runs no program of the command's choice).
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1", "false", "no", "off", "0":
		return true
	}
	return false
}

// splitConfigKey splits section.sub.key (the subsection may hold dots);
// section and key lower-cased as git compares them.
func splitConfigKey(k string) (section, sub, key string) {
	first, last := strings.Index(k, "."), strings.LastIndex(k, ".")
	if first < 0 {
		return strings.ToLower(k), "", ""
	}
	section, key = strings.ToLower(k[:first]), strings.ToLower(k[last+1:])
	if last > first {
		sub = k[first+1 : last]
	}
	return section, sub, key
}

// gitConfigRisk grades key set to value; known is false when the value is
// not visible (--config-env, a variable): then a key that can name a
// program counts as one that does.
func gitConfigRisk(k, value string, known bool) configRisk {
	section, sub, key := splitConfigKey(k)
	prog := func() configRisk {
		if !known {
			return configRuns
		}
		return programValueRisk(value)
	}
	progOrBool := func() configRisk {
		if known && gitBool(value) {
			return configPlain
		}
		return prog()
	}
	switch section + "." + key {
	case "core.fsmonitor":
		return progOrBool() // true is git's own daemon; a path is a program
	case "core.hookspath":
		if known && value == "/dev/null" {
			return configPlain
		}
		return configRuns
	case "core.editor", "sequence.editor":
		if !known {
			return configRuns
		}
		return editorValueRisk(value)
	case "include.path", "includeif.path", "init.templatedir":
		return configRuns // a file git obeys, or hooks copied into new repositories
	case "safe.directory", "core.protectntfs", "core.protecthfs":
		if section == "safe" || !known || falsy(value) {
			return configWeakens
		}
	case "http.sslverify":
		if !known || falsy(value) {
			return configWeakens
		}
	case "http.proxy", "https.proxy", "http.sslcainfo", "http.sslcapath", "http.sslbackend", "http.proxysslcainfo":
		return configWeakens
	case "protocol.allow":
		if !known || strings.ToLower(value) != "never" {
			return configWeakens
		}
	case "credential.helper":
		// A bare name is git's own helper (store, cache, manager...).
		if known && value != "" && !strings.ContainsAny(value, "/!;|&$`<>()") {
			return configPlain
		}
		return prog()
	case "alias." + key:
		if sub == "" && (!known || strings.HasPrefix(strings.TrimSpace(value), "!") || gitOptionsRun(strings.Fields(value))) {
			return configRuns
		}
	case "pager." + key:
		if sub == "" {
			return progOrBool()
		}
	}
	if gitconfig.ProgramKey(section, sub, key) {
		return prog()
	}
	if sub == "" {
		return configPlain
	}
	switch section + "." + key {
	case "submodule.update":
		if !known || strings.HasPrefix(strings.TrimSpace(value), "!") {
			return configRuns
		}
	case "url.insteadof", "url.pushinsteadof":
		return configWeakens // fetches and pushes go elsewhere than the command says
	}
	return configPlain
}

// gitOptionsRun: git global options (as in an alias: `alias.l = -c
// core.pager=x log`) that set a risky key.
func gitOptionsRun(args []string) bool {
	for _, s := range gitConfigOptions(args) {
		if s.risk != configPlain {
			return true
		}
	}
	return false
}

// gitSetting is one key set for a single command by a git global option.
type gitSetting struct {
	key   string
	value string // "" when not on the line (--config-env)
	text  string // as written: -c key=value, --config-env=key=VAR
	risk  configRisk
}

// gitConfigOptions reads the -c and --config-env options before the
// subcommand.
func gitConfigOptions(args []string) []gitSetting {
	var out []gitSetting
	for i := 0; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			k, v, hasValue := strings.Cut(args[i], "=")
			if !hasValue {
				v = "true" // `-c key` alone sets a boolean
			}
			out = append(out, gitSetting{k, v, "-c " + args[i], gitConfigRisk(k, v, true)})
		case (a == "--config-env" && i+1 < len(args)) || strings.HasPrefix(a, "--config-env="):
			spec := strings.TrimPrefix(a, "--config-env=")
			if a == "--config-env" {
				i++
				spec = args[i]
			}
			k, _, _ := strings.Cut(spec, "=")
			out = append(out, gitSetting{k, "", "--config-env=" + spec, gitConfigRisk(k, "", false)})
		case gitValueOption(a) && i+1 < len(args):
			i++
		}
	}
	return out
}

// gitOneShot records the keys a git command sets for itself: those that
// run a program of the command's choosing or weaken a check are high risk
// (the program is not analysed); Warden's own hardening values
// (core.fsmonitor=, core.hooksPath=/dev/null, core.pager=cat) are not.
func (as *Assessor) gitOneShot(args []string) {
	for _, s := range gitConfigOptions(args) {
		as.remoteRedirect(s.key, s.value, s.text)
		switch s.risk {
		case configRuns:
			as.Add(High, SystemModification, "makes git run a program Warden cannot analyse ("+s.text+")")
		case configWeakens:
			// For this command only, inside its sandbox: what the check
			// guarded (local files, the network) the sandbox still guards,
			// except a fetch whose TLS or destination changed while the
			// network is on.
			section, _, _ := splitConfigKey(s.key)
			stops := as.confined() && (as.offline() || section != "http" && section != "https" && section != "url")
			as.stoppedIf(stops, High, SystemModification, weakens(s.key)+" ("+s.text+")")
		}
	}
}

// gitValueOption: a git global option whose value is the next word.
func gitValueOption(a string) bool {
	switch a {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
		return true
	}
	return false
}

// gitConfigVerbs are the subcommands of `git config` since git 2.46.
var gitConfigVerbs = map[string]string{
	"get": "read", "list": "read", "set": "write", "unset": "unset",
	"rename-section": "section", "remove-section": "section", "edit": "edit",
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
		case len(ops) == 0 && mode == "" && gitConfigVerbs[a] != "":
			mode = gitConfigVerbs[a] // git 2.46: options may follow the verb
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
	stops := as.confined() && (target == "" || as.beyondSandbox(target) || gitObeyedPath(target))
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
		switch gitConfigRisk(key, value, true) {
		case configRuns:
			as.stoppedIf(stops, High, SystemModification, fmt.Sprintf("makes git run a program from now on, outside any sandbox: %s = %s (%s)", key, quoteValue(value), where))
			return
		case configWeakens:
			as.stoppedIf(stops, High, SystemModification, fmt.Sprintf("%s from now on: %s = %s (%s)", weakens(key), key, quoteValue(value), where))
			return
		}
		as.stoppedIf(stops, Medium, "", fmt.Sprintf("changes git configuration: %s (%s)", key, where))
	case "edit":
		as.stoppedIf(stops, Medium, "", "edits git configuration in an editor ("+where+")")
	default:
		as.stoppedIf(stops, Medium, "", fmt.Sprintf("removes git configuration %s (%s)", strings.Join(ops, " "), where))
	}
}

// weakens says what a configWeakens key does.
func weakens(k string) string {
	section, _, key := splitConfigKey(k)
	switch {
	case section == "url":
		return "redirects git's fetches and pushes to other URLs"
	case strings.HasSuffix(key, "proxy"):
		return "sends git's traffic through a proxy"
	case section == "http":
		return "weakens git's TLS checks"
	case section == "protocol":
		return "lets git use transports it refuses by default"
	case section == "safe":
		return "makes git trust repositories owned by others"
	}
	return "turns off a git security check"
}

// quoteValue shows a config value in a fact, shortened.
func quoteValue(v string) string {
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return fmt.Sprintf("%q", v)
}

// gitConfigTarget is the file a `git config` write changes ("" when the
// repository's cannot be found: the local config of a repository that
// does not exist yet).
func (as *Assessor) gitConfigTarget(gitCwd, scope, file string) string {
	switch {
	case file != "":
		return as.absFrom(gitCwd, file)
	case scope == "--global":
		if as.Ctx.Home == "" {
			return ""
		}
		return filepath.Join(as.Ctx.Home, ".gitconfig")
	case scope == "--system":
		return "/etc/gitconfig"
	}
	if _, err := os.Stat(gitCwd); err != nil {
		return "" // made by the command itself (`git init sub && git -C sub config ...`)
	}
	cfg := gitConfigPath(gitCwd)
	if cfg != "" && scope == "--worktree" {
		cfg = filepath.Join(filepath.Dir(cfg), "config.worktree")
	}
	return cfg
}

// gitObeyedPath: p is inside a git dir, in an entry git obeys (config,
// hooks, info/attributes...), which the sandbox holds read-only.
func gitObeyedPath(p string) bool {
	_, rest, ok := gitDirRest(p)
	if !ok {
		return false
	}
	for _, n := range gitObeyedNames {
		if rest == n || strings.HasPrefix(rest, n+"/") {
			return true
		}
	}
	return false
}

// gitObeyedNames are the entries of a git dir whose content makes git run
// programs or read other files.
var gitObeyedNames = []string{"config", "config.worktree", "hooks", "info/attributes", "commondir"}

// gitDirRest splits p at its innermost git dir (.git, or a nested one
// under .git/modules/NAME or .git/worktrees/NAME): the part after it.
func gitDirRest(p string) (gitDir, rest string, ok bool) {
	parts := strings.Split(filepath.Clean(p), string(filepath.Separator))
	at := -1
	for i, el := range parts {
		if el == ".git" {
			at = i
		}
	}
	if at < 0 {
		return "", "", false
	}
	i := at + 1
	// .git/modules/a/modules/b, .git/worktrees/w: the nested git dir.
	for i+1 < len(parts) && (parts[i] == "modules" || parts[i] == "worktrees") {
		i += 2
	}
	if i > len(parts) {
		i = len(parts)
	}
	return strings.Join(parts[:i], "/"), strings.Join(parts[i:], "/"), true
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
	if gitObeyedPath(p) {
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

// gitEnvName matches assignments of the variables that configure git or
// name a program it runs.
var gitEnvName = lazyre.New(`\b(GIT_CONFIG(?:_COUNT|_KEY_\d+|_VALUE_\d+|_PARAMETERS|_GLOBAL|_SYSTEM)?|GIT_(?:PAGER|EDITOR|SEQUENCE_EDITOR|SSH|SSH_COMMAND|ASKPASS|EXTERNAL_DIFF|PROXY_COMMAND|EXEC_PATH|TEMPLATE_DIR|SSL_NO_VERIFY|SSL_CAINFO|SSL_CAPATH))=`)

// gitEnvironment judges git's variables set in the command line (code and
// nested scripts, not quoted text): GIT_CONFIG_KEY_n/VALUE_n pairs as the
// key they set, the program variables by their value.
func (as *Assessor) gitEnvironment(code, raw string) {
	if !strings.Contains(code, "GIT_") {
		return // every name the pattern matches starts so
	}
	for _, m := range gitEnvName().FindAllStringSubmatch(code, -1) {
		name := m[1]
		value, known := gitEnvValue(raw, name)
		var r configRisk
		switch {
		case name == "GIT_CONFIG_COUNT" || strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
			continue // judged with its key
		case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
			v, vk := gitEnvValue(raw, "GIT_CONFIG_VALUE_"+strings.TrimPrefix(name, "GIT_CONFIG_KEY_"))
			r = gitConfigRisk(value, v, known && vk)
			if known && vk {
				as.remoteRedirect(value, v, name+"="+value)
			}
		case name == "GIT_CONFIG_PARAMETERS":
			r = configRuns // not parsed: fail closed
		case name == "GIT_CONFIG" || name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_TEMPLATE_DIR" || name == "GIT_EXEC_PATH":
			if !known || value != "/dev/null" {
				r = configRuns // a file or directory git obeys
			}
		case name == "GIT_SSL_NO_VERIFY" || name == "GIT_SSL_CAINFO" || name == "GIT_SSL_CAPATH":
			r = configWeakens
		case name == "GIT_EDITOR" || name == "GIT_SEQUENCE_EDITOR":
			r = configRuns
			if known {
				r = editorValueRisk(value)
			}
		default:
			r = configRuns
			if known {
				r = programValueRisk(value)
			}
		}
		switch r {
		case configRuns:
			as.Add(High, SystemModification, "makes git run a program or read a configuration Warden cannot analyse ("+name+")")
		case configWeakens:
			as.Add(High, SystemModification, "weakens git's checks ("+name+")")
		}
	}
}

// gitEnvLiteral is a plain literal value after NAME=, up to the end of the
// word (compiled once: gitEnvValue runs for every git variable a line sets).
var gitEnvLiteral = lazyre.New(`^('[^']*'|"[^"$` + "`" + `]*"|[^\s;&|'"$` + "`" + `]*)(?:[\s;&|]|$)`)

// gitEnvValue finds NAME=value in a script (the first NAME= not preceded by
// a word character whose value is a plain literal): the value unquoted, and
// whether it is one.
func gitEnvValue(raw, name string) (string, bool) {
	assign := name + "="
	for off := 0; ; {
		i := strings.Index(raw[off:], assign)
		if i < 0 {
			return "", false
		}
		at := off + i
		off = at + 1
		if at > 0 && isWordByte(raw[at-1]) {
			continue
		}
		if m := gitEnvLiteral().FindStringSubmatch(raw[at+len(assign):]); m != nil {
			v := m[1]
			if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1] // one pair of quotes: what is inside stays as written
			}
			return v, true
		}
	}
}

// isWordByte: a character of regexp's \w (ASCII letters, digits, _).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// rawCommandLine is the script and the nested scripts as written (for the
// values of variable assignments, which commandLineText blanks).
func rawCommandLine(a *command.Analysis) string {
	var b strings.Builder
	b.WriteString(a.Script)
	for _, s := range a.Segments {
		if s.Nested && len(s.Argv) > 0 {
			b.WriteByte('\n')
			b.WriteString(s.Argv[len(s.Argv)-1])
		}
	}
	return b.String()
}

// remoteRedirect judges a remote's URL set for one command (-c
// remote.origin.pushurl=URL, GIT_CONFIG_KEY_n): the command's pushes and
// fetches go there, and one that is none of the repository's remotes is
// where a copy of it would be pushed.
func (as *Assessor) remoteRedirect(key, value, text string) {
	section, sub, name := splitConfigKey(key)
	if section != "remote" || sub == "" || name != "url" && name != "pushurl" {
		return
	}
	if repo := gitURLRepo(value); repo != "" && !slices.Contains(repoRemoteRepos(as.Ctx.Cwd), repo) {
		as.stoppedIf(as.offline(), High, DataExfiltration, fmt.Sprintf("sends the remote %q's pushes to %s, which is not one of its remotes (%s)", sub, repo, text))
	}
}
