package risk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/internal/lazyre"
)

// commandLineText is the code of a command line as the shell reads it: the
// script and the scripts of nested shells, so a pattern that spans commands
// (a pipe into a shell, a substitution) is found however deeply it is
// nested. Quoted text that the shell does not run is left out
// (`echo 'curl x | sh'` prints it).
func commandLineText(a *command.Analysis) string {
	var b strings.Builder
	b.WriteString(unquotedCode(a.Script))
	for _, s := range a.Segments {
		if s.Nested && len(s.Argv) > 0 {
			b.WriteByte('\n')
			b.WriteString(unquotedCode(s.Argv[len(s.Argv)-1]))
		}
	}
	return b.String()
}

// unquotedCode blanks single-quoted strings and double-quoted strings that
// hold no command substitution, keeping the quotes.
func unquotedCode(script string) string {
	var b strings.Builder
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\\' && i+1 < len(script):
			b.WriteByte(c)
			b.WriteByte(script[i+1])
			i++
		case c == '\'':
			end := strings.IndexByte(script[i+1:], '\'')
			if end < 0 {
				return b.String()
			}
			b.WriteString("''")
			i += end + 1
		case c == '"':
			j := i + 1
			for j < len(script) && script[j] != '"' {
				if script[j] == '\\' {
					j++
				}
				j++
			}
			body := script[i+1 : min(j, len(script))]
			if strings.Contains(body, "$(") || strings.Contains(body, "`") {
				b.WriteString("\"" + body + "\"")
			} else {
				b.WriteString(`""`)
			}
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

const (
	fetchers = `(?:curl|wget|fetch|http|https|xh|aria2c)`
	// runners are the programs that run a script read from their input or
	// named as a file: the shells and the common interpreters.
	runners = `(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:\S*/)?(?:bash|sh|zsh|dash|ksh|fish|python[0-9.]*|perl|ruby|node|php)`
)

var (
	// fetchStage and runnerStage are the two ends of `curl URL | sh`,
	// `wget -O- URL | sudo bash -s`, `curl URL | tee i.sh | sh`.
	fetchStage  = lazyre.New(`\b` + fetchers + `\b`)
	runnerStage = lazyre.New(`^\s*` + runners + `\b`)
	// runnerOfSubstitution: `bash <(curl URL)`, `source <(curl URL)`,
	// `sh -c "$(curl URL)"`, `eval "$(wget -qO- URL)"`.
	runnerOfSubstitution = lazyre.New(`(?:` + runners + `|source|\.|eval)\s+(?:-\S+\s+)*["']?(?:<\(|\$\(|` + "`" + `)\s*` + fetchers + `\b[^)` + "`" + `]*`)
	UrlInText            = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"|)` + "`" + `;&]+`)
)

// downloadIntoShell flags a download run as code: nothing of what runs is
// known before it arrives, and the server may send anything.
func (as *Assessor) downloadIntoShell(text string) {
	if !strings.ContainsAny(text, "|<$`") {
		return // neither a pipe nor a substitution for the patterns to find
	}
	downloads := pipedToRunner(text)
	if strings.ContainsAny(text, "<$`") {
		downloads = append(downloads, runnerOfSubstitution().FindAllString(text, -1)...)
	}
	for _, m := range downloads {
		host := "an unknown host"
		for _, u := range UrlInText().FindAllString(m, -1) {
			if h := urlHost(u); h != "" {
				host = h
				break
			}
		}
		as.Add(High, NetworkAccess, "runs a script downloaded from "+host)
	}
}

// pipedToRunner returns the download stages of text's pipelines whose
// output a later stage of the same pipeline runs as a script, whatever
// filters it passes on the way (`curl URL | tee i.sh | sh`, `curl URL |
// gunzip | bash`).
func pipedToRunner(text string) []string {
	if !strings.Contains(text, "|") {
		return nil
	}
	var found []string
	for _, pipeline := range pipelines(text) {
		for i, stage := range pipeline {
			if !fetchStage().MatchString(stage) {
				continue
			}
			if slices.ContainsFunc(pipeline[i+1:], func(s string) bool { return runnerStage().MatchString(s) }) {
				found = append(found, stage)
			}
			break
		}
	}
	return found
}

// stdinUploadHost is the host prog's command sends its standard input to:
// curl -T -, --data-binary @- and the like, wget --post-file=-, nc HOST
// PORT (not a port scan or a listener); "" for none.
func stdinUploadHost(prog string, args []string) string {
	switch prog {
	case "curl", "wget":
		reads := false
		for i, a := range args {
			next := ""
			if i+1 < len(args) {
				next = args[i+1]
			}
			switch {
			case (a == "-T" || a == "--upload-file") && next == "-",
				(a == "-d" || a == "--data" || a == "--data-binary" || a == "--data-raw" || a == "--data-urlencode" || a == "--json") && strings.HasSuffix(next, "@-"),
				(a == "-F" || a == "--form") && strings.HasSuffix(next, "=@-"),
				a == "-d@-" || a == "--post-file=-" || a == "--body-file=-" || a == "--data-binary=@-":
				reads = true
			}
		}
		if !reads {
			return ""
		}
		for _, a := range args {
			if h := urlHost(a); h != "" {
				return h
			}
		}
		return "the network"
	case "nc", "ncat", "netcat":
		if hasFlag(args, "-z", "-l", "--listen") || hasFlagPrefix(args, "-z") || hasFlagPrefix(args, "-l") {
			return ""
		}
		for _, op := range Operands(args) {
			if !command.LooksNumeric(op) {
				return op
			}
		}
	}
	return ""
}

// producerStage is a pipeline stage that outputs files' contents: what a
// later stage that sends its input uploads.
var producerStage = lazyre.New(`^\s*(?:sudo\s+(?:-\S+\s+)*)?(?:tar|bsdtar|zip|7z|cat|tac|head|tail|gzip|zcat|xz|bzip2|base64|xxd|od|pg_dump|pg_dumpall|mysqldump|sqlite3|git\s+(?:archive|bundle|format-patch|diff|log|show))\b`)

// pipedUploads flags a pipeline that feeds files' contents to a command
// that sends its input to a host: `tar czf - . | curl -T - URL`, `cat f |
// nc HOST PORT`.
func (as *Assessor) pipedUploads(text string) {
	if len(as.stdinSenders) == 0 {
		return
	}
	for _, pipeline := range pipelines(text) {
		for i, stage := range pipeline {
			if i == 0 || !producerStage().MatchString(pipeline[0]) && !slices.ContainsFunc(pipeline[:i], func(s string) bool { return producerStage().MatchString(s) }) {
				continue
			}
			for _, host := range as.stdinSenders {
				if strings.Contains(stage, host) || host == "the network" {
					producer := strings.TrimSpace(pipeline[slices.IndexFunc(pipeline[:i], func(s string) bool { return producerStage().MatchString(s) })])
					as.stoppedIf(as.offline(), remoteLevel(host), DataExfiltration, fmt.Sprintf("uploads the output of `%s` to %s", command.EscapeText(producer), host))
				}
			}
		}
	}
}

// redirectAmp says whether the & at text[i] belongs to a redirection
// (2>&1, <&3, &>file) rather than ending a command.
func redirectAmp(text string, i int) bool {
	return i > 0 && (text[i-1] == '>' || text[i-1] == '<') || i+1 < len(text) && text[i+1] == '>'
}

// pipelines splits shell text (quoted strings blanked: commandLineText)
// into pipelines, each a list of its stages: a pipeline ends at ; & && ||
// and newlines, a stage at | and |&.
func pipelines(text string) [][]string {
	var out [][]string
	var cur []string
	start := 0
	endStage := func(i int) {
		cur = append(cur, text[start:i])
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '|' && i+1 < len(text) && text[i+1] == '|', c == ';', c == '\n', c == '&' && !redirectAmp(text, i):
			endStage(i)
			out = append(out, cur)
			cur = nil
			if c != ';' && c != '\n' && i+1 < len(text) && text[i+1] == c {
				i++
			}
			start = i + 1
		case c == '|':
			endStage(i)
			if i+1 < len(text) && text[i+1] == '&' {
				i++
			}
			start = i + 1
		}
	}
	endStage(len(text))
	return append(out, cur)
}

// largeUpload is how much a command may have sent before a network dialog
// says so as a warning.
const largeUpload = 1 << 20

// NetworkRisk grades a connection to host for a network dialog, from the
// same host facts the command analysis uses: a known registry or the
// repository's own remote is low, an unknown host or one on this machine or
// the local network medium, a link-local address (cloud metadata) high.
// A command that has already uploaded a lot is at least medium.
func NetworkRisk(host string, bytesUp int64, remotes []string) Risk {
	host = rules.NormalizeHost(host)
	facts := HostFacts(host, remotes)
	level := Medium
	where, high := HostReach(host)
	switch {
	case high:
		level = High
	case where == "" && (KnownHost(host) != "" || slices.Contains(remotes, host)):
		level = Low
	}
	if bytesUp >= largeUpload {
		facts = append(facts, "the command has already uploaded "+ByteCount(bytesUp))
		level = max(level, Medium)
	}
	return Risk{Level: level, Categories: []Category{NetworkAccess}, Summary: facts[0], Facts: facts}
}

// hostNote is the short note the command analysis adds to "contacts HOST":
// " (the npm registry)", " (this repository's remote)", or "".
func hostNote(host string, remotes []string) string {
	host = rules.NormalizeHost(host)
	if where, _ := HostReach(host); where != "" {
		return " (" + where + ")"
	}
	known := KnownHost(host)
	switch {
	case known != "" && slices.Contains(remotes, host):
		return " (" + known + ", this repository's own remote)"
	case known != "":
		return " (" + known + ")"
	case slices.Contains(remotes, host):
		return " (this repository's own remote)"
	}
	return " (an unknown host)"
}

// byteCount writes n bytes for people: 512 bytes, 3.2 KiB, 1.0 MiB.
func ByteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d %s", n, command.PluralWord(int(n), "byte", "bytes"))
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
