package approvals

import (
	"regexp"
	"strings"
)

// commandLineText is the text of a command line as written: the script and
// every command's words, so a pattern that spans commands (a pipe into a
// shell, a substitution) is found however deeply it is nested.
func commandLineText(a *Analysis) string {
	var b strings.Builder
	b.WriteString(a.Script)
	for _, s := range a.Segments {
		b.WriteByte('\n')
		b.WriteString(strings.Join(s.Argv, " "))
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
	// pipeToRunner: `curl URL | sh`, `wget -O- URL | sudo bash -s`.
	pipeToRunner = regexp.MustCompile(`\b` + fetchers + `\b[^|;&\n]*\|\s*` + runners + `\b`)
	// runnerOfSubstitution: `bash <(curl URL)`, `source <(curl URL)`,
	// `sh -c "$(curl URL)"`, `eval "$(wget -qO- URL)"`.
	runnerOfSubstitution = regexp.MustCompile(`(?:` + runners + `|source|\.|eval)\s+(?:-\S+\s+)*["']?(?:<\(|\$\(|` + "`" + `)\s*` + fetchers + `\b[^)` + "`" + `]*`)
	urlInText            = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"|)` + "`" + `;&]+`)
)

// downloadIntoShell flags a download run as code: nothing of what runs is
// known before it arrives, and the server may send anything.
func (as *assessor) downloadIntoShell(text string) {
	for _, re := range []*regexp.Regexp{pipeToRunner, runnerOfSubstitution} {
		for _, m := range re.FindAllString(text, -1) {
			host := "an unknown host"
			for _, u := range urlInText.FindAllString(m, -1) {
				if h := urlHost(u); h != "" {
					host = h
					break
				}
			}
			as.add(RiskHigh, NetworkAccess, "runs a script downloaded from "+host)
		}
	}
}
