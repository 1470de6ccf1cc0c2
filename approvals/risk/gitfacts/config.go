package gitfacts

import (
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/lazyre"
)

// Git configuration can make git run programs (pagers, editors, hooks,
// diff, merge and filter drivers, credential helpers, `!` aliases...), pull
// in other files (include.path) or weaken what git checks (TLS, transport
// protocols, safe.directory, URL rewrites). A write of such a key persists:
// git runs the program later, on the host, outside any sandbox. `git -c`,
// --config-env and the GIT_CONFIG_* variables set one for a single command.

// ConfigRisk grades one key = value.
type ConfigRisk int

const (
	configPlain   ConfigRisk = iota // a setting like any other
	ConfigRuns                      // names a program git runs, or a file it obeys
	ConfigWeakens                   // turns off a check git makes
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

// ProgramValueRisk grades a value git runs as a program (through the shell
// when it holds shell syntax).
func ProgramValueRisk(v string) ConfigRisk {
	v = strings.TrimSpace(v)
	if v == "" {
		return configPlain // no program: git's default, or none
	}
	if strings.ContainsAny(v, ";|&$`<>(){}!\\\n'\"*?") {
		return ConfigRuns
	}
	words := strings.Fields(v)
	prog := words[0]
	if strings.Contains(prog, "/") {
		dir := filepath.Dir(prog)
		if dir != "/usr/bin" && dir != "/bin" && dir != "/usr/local/bin" {
			return ConfigRuns // a script the command may have written
		}
		prog = filepath.Base(prog)
	}
	if !knownPrograms[prog] {
		return ConfigRuns
	}
	if prog == "ssh" {
		for _, w := range words[1:] {
			lw := strings.ToLower(w)
			switch {
			case strings.Contains(lw, "proxycommand") || strings.Contains(lw, "localcommand") || strings.Contains(lw, "knownhostscommand"):
				return ConfigRuns
			case strings.Contains(lw, "stricthostkeychecking=no") || strings.Contains(lw, "userknownhostsfile=/dev/null"):
				return ConfigWeakens
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

// SplitConfigKey splits section.sub.key (the subsection may hold dots);
// section and key lower-cased as git compares them.
func SplitConfigKey(k string) (section, sub, key string) {
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

// ConfigKeyRisk grades key set to value; known is false when the value is
// not visible (--config-env, a variable): then a key that can name a
// program counts as one that does.
func ConfigKeyRisk(k, value string, known bool) ConfigRisk {
	section, sub, key := SplitConfigKey(k)
	prog := func() ConfigRisk {
		if !known {
			return ConfigRuns
		}
		return ProgramValueRisk(value)
	}
	progOrBool := func() ConfigRisk {
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
		return ConfigRuns
	case "core.editor", "sequence.editor":
		if !known {
			return ConfigRuns
		}
		return EditorValueRisk(value)
	case "include.path", "includeif.path", "init.templatedir":
		return ConfigRuns // a file git obeys, or hooks copied into new repositories
	case "safe.directory", "core.protectntfs", "core.protecthfs":
		if section == "safe" || !known || falsy(value) {
			return ConfigWeakens
		}
	case "http.sslverify":
		if !known || falsy(value) {
			return ConfigWeakens
		}
	case "http.proxy", "https.proxy", "http.sslcainfo", "http.sslcapath", "http.sslbackend", "http.proxysslcainfo":
		return ConfigWeakens
	case "protocol.allow":
		if !known || strings.ToLower(value) != "never" {
			return ConfigWeakens
		}
	case "credential.helper":
		// A bare name is git's own helper (store, cache, manager...).
		if known && value != "" && !strings.ContainsAny(value, "/!;|&$`<>()") {
			return configPlain
		}
		return prog()
	case "alias." + key:
		if sub == "" && (!known || strings.HasPrefix(strings.TrimSpace(value), "!") || gitOptionsRun(strings.Fields(value))) {
			return ConfigRuns
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
			return ConfigRuns
		}
	case "url.insteadof", "url.pushinsteadof":
		return ConfigWeakens // fetches and pushes go elsewhere than the command says
	}
	return configPlain
}

// gitOptionsRun: git global options (as in an alias: `alias.l = -c
// core.pager=x log`) that set a risky key.
func gitOptionsRun(args []string) bool {
	for _, s := range ConfigOptions(args) {
		if s.Risk != configPlain {
			return true
		}
	}
	return false
}

// Setting is one key set for a single command by a git global option.
type Setting struct {
	Key   string
	Value string // "" when not on the line (--config-env)
	Text  string // as written: -c key=value, --config-env=key=VAR
	Risk  ConfigRisk
}

// ConfigOptions reads the -c and --config-env options before the
// subcommand.
func ConfigOptions(args []string) []Setting {
	var out []Setting
	for i := 0; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			k, v, hasValue := strings.Cut(args[i], "=")
			if !hasValue {
				v = "true" // `-c key` alone sets a boolean
			}
			out = append(out, Setting{k, v, "-c " + args[i], ConfigKeyRisk(k, v, true)})
		case (a == "--config-env" && i+1 < len(args)) || strings.HasPrefix(a, "--config-env="):
			spec := strings.TrimPrefix(a, "--config-env=")
			if a == "--config-env" {
				i++
				spec = args[i]
			}
			k, _, _ := strings.Cut(spec, "=")
			out = append(out, Setting{k, "", "--config-env=" + spec, ConfigKeyRisk(k, "", false)})
		case ValueOption(a) && i+1 < len(args):
			i++
		}
	}
	return out
}

// ValueOption: a git global option whose value is the next word.
func ValueOption(a string) bool {
	switch a {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
		return true
	}
	return false
}

// ConfigVerbs are the subcommands of `git config` since git 2.46.
var ConfigVerbs = map[string]string{
	"get": "read", "list": "read", "set": "write", "unset": "unset",
	"rename-section": "section", "remove-section": "section", "edit": "edit",
}

// Weakens says what a ConfigWeakens key does.
func Weakens(k string) string {
	section, _, key := SplitConfigKey(k)
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

// ObeyedPath: p is inside a git dir, in an entry git obeys (config,
// hooks, info/attributes...), which the sandbox holds read-only.
func ObeyedPath(p string) bool {
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

// EnvName matches assignments of the variables that configure git or
// name a program it runs.
var EnvName = lazyre.New(`\b(GIT_CONFIG(?:_COUNT|_KEY_\d+|_VALUE_\d+|_PARAMETERS|_GLOBAL|_SYSTEM)?|GIT_(?:PAGER|EDITOR|SEQUENCE_EDITOR|SSH|SSH_COMMAND|ASKPASS|EXTERNAL_DIFF|PROXY_COMMAND|EXEC_PATH|TEMPLATE_DIR|SSL_NO_VERIFY|SSL_CAINFO|SSL_CAPATH))=`)

// gitEnvLiteral is a plain literal value after NAME=, up to the end of the
// word (compiled once: EnvValue runs for every git variable a line sets).
var gitEnvLiteral = lazyre.New(`^('[^']*'|"[^"$` + "`" + `]*"|[^\s;&|'"$` + "`" + `]*)(?:[\s;&|]|$)`)

// EnvValue finds NAME=value in a script (the first NAME= not preceded by
// a word character whose value is a plain literal): the value unquoted, and
// whether it is one.
func EnvValue(raw, name string) (string, bool) {
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
