package risk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/lazyre"
	"github.com/wardenhq/warden/sandbox"
)

// Level grades what a command could do if it did its worst.
type Level int

const (
	Low Level = iota
	Medium
	High
)

func (l Level) String() string {
	switch l {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return fmt.Sprintf("RiskLevel(%d)", int(l))
}

func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Category names a kind of harm.
type Category string

const (
	DataDeletion        Category = "data_deletion"
	DataExfiltration    Category = "data_exfiltration"
	PrivilegeEscalation Category = "privilege_escalation"
	SystemModification  Category = "system_modification"
	NetworkAccess       Category = "network_access"
	ResourceExhaustion  Category = "resource_exhaustion"
	HistoryRewrite      Category = "history_rewrite"
)

// Risk is the static assessment of a command: facts read off the command
// line and the filesystem, offline, in microseconds to milliseconds.
type Risk struct {
	Level      Level      `json:"level"`
	Categories []Category `json:"categories"`
	Summary    string     `json:"summary"`
	Facts      []string   `json:"facts"`
	// ReadsSecrets: the command reads credentials, so it is never
	// known-safe and always asks (refused under never).
	ReadsSecrets bool
	// sandboxStops: every high-risk fact is one a restricted sandbox stops
	// (writes outside the writable roots, root privileges, the network
	// when it is off), so under never the command may run sandboxed; a
	// high-risk fact about what the sandbox lets through (deleting inside
	// the writable roots, rewriting history) makes never refuse it.
	SandboxStops bool
	// hosts are the network destinations the command names (Hosts).
	hosts []string
}

// Hosts lists the hosts the analysis found the command contacting, in the
// order found (for the network part of policy check).
func (r Risk) Hosts() []string { return r.hosts }

// Context is where a command would run.
type Context struct {
	Cwd     string
	Sandbox sandbox.Policy
	// Home is the user's home directory, shown as ~ in facts. Empty means
	// os.UserHomeDir.
	Home string
	// Recorded are the roots whose changes Warden records for undo (the
	// workspace, unless record_changes is off): a deletion there can be
	// undone; one past the copy limit, or in a writable directory outside
	// them, cannot (undo.go).
	Recorded []string
}

// Assessor accumulates the facts of one command line or patch.
type Assessor struct {
	ctx         Context
	roots       []string // the writable roots: what is written there stays inside
	level       Level
	categories  map[Category]bool
	facts       []riskFact
	seen        map[string]bool
	hosts       []string // network destinations, for exfiltration pairing
	remotes     []string // the repository's remote hosts, read when first needed
	remotesRead bool
	secrets     []string // secret files read
	unstopped   bool     // a high-risk fact the sandbox does not stop
	mkdir       bool     // the writes are directories made (mkdir)
	// stdinSenders are the hosts commands of the line send their input
	// to (curl -T -, -d @-, nc HOST PORT), for pipedUploads.
	stdinSenders []string
	// netFDs are the hosts an `exec N<>/dev/tcp/...` of the line opened a
	// descriptor to, for a shell that reads from it (shellOnSocket).
	netFDs []string
	// repointed are the git remotes the line adds or changes, by name:
	// their URLs.
	repointed map[string]string
}

type riskFact struct {
	level Level
	text  string
}

// factsBySeverity lists the facts, most severe first, in discovery order
// within a level.
func (as *Assessor) FactsBySeverity() []string {
	sort.SliceStable(as.facts, func(i, j int) bool { return as.facts[i].level > as.facts[j].level })
	out := make([]string, len(as.facts))
	for i, f := range as.facts {
		out[i] = f.text
	}
	return out
}

// newAssessor starts the facts of one command line (or patch, or read) in ctx.
func NewAssessor(ctx Context, writable ...string) *Assessor {
	return &Assessor{ctx: ctx, roots: writable, categories: map[Category]bool{}, seen: map[string]bool{}}
}

// Roots are the writable roots the assessor judges writes against.
func (as *Assessor) Roots() []string { return as.roots }

// Found is what the assessor found so far, as a Risk without a summary:
// the highest level, the categories and the facts worst first.
func (as *Assessor) Found() Risk {
	r := Risk{Level: as.level, Categories: make([]Category, 0, len(as.categories)), Facts: as.FactsBySeverity()}
	for c := range as.categories {
		r.Categories = append(r.Categories, c)
	}
	return r
}

// ReadsSecret reports whether a read the assessor judged was of a secret.
func (as *Assessor) ReadsSecret() bool { return len(as.secrets) > 0 }

// Assess reports what the analysed command line would do. It reads the
// filesystem (to count what a deletion removes, to find a git remote's host)
// but never runs anything.
func Assess(a *command.Analysis, ctx Context) Risk {
	if ctx.Home == "" {
		ctx.Home, _ = os.UserHomeDir()
	}
	writable := slices.Clone(ctx.Sandbox.WritableRoots)
	// The workspace is writable; the cwd counts as writable only for a
	// caller that declares no workspace (with one, a cwd outside it is
	// outside: see workdir.go).
	if ctx.Sandbox.Mode != sandbox.ReadOnly {
		writable = append(writable, ctx.Sandbox.Workspace...)
		if ctx.Cwd != "" && len(ctx.Sandbox.Workspace) == 0 {
			writable = append(writable, ctx.Cwd)
		}
	}
	as := NewAssessor(ctx, writable...)
	text := as.line(a)
	if len(as.secrets) > 0 && len(as.hosts) > 0 && !as.categories[DataExfiltration] {
		as.Add(High, DataExfiltration, fmt.Sprintf("reads secrets (%s) and contacts %s", strings.Join(as.secrets, ", "), strings.Join(as.hosts, ", ")))
	}
	as.pipedUploads(text)
	cats := make([]Category, 0, len(as.categories))
	for c := range as.categories {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i] < cats[j] })
	r := Risk{Level: as.level, Categories: cats, Facts: as.FactsBySeverity(), ReadsSecrets: len(as.secrets) > 0,
		SandboxStops: !as.unstopped && ctx.Sandbox.Mode != sandbox.DangerFullAccess, hosts: as.hosts}
	r.Summary = Summarize(a, r)
	return r
}

// line judges one analysed command line: each command, then what only the
// whole text shows (downloads run by a shell, credentials, git's
// environment). It returns the text for the checks across the line.
func (as *Assessor) line(a *command.Analysis) string {
	for _, p := range a.Problems {
		as.Add(Medium, "", "not fully analysed: "+p)
	}
	if strings.Contains(a.Script, "()") && strings.Contains(a.Script, "&") && forkBomb().MatchString(a.Script) {
		as.Add(High, ResourceExhaustion, "fork bomb: starts processes without end")
	}
	for _, seg := range a.Segments {
		as.segment(seg)
	}
	text := commandLineText(a)
	as.runtimeCredentials(text)
	as.credentialAssignments(a.Assignments)
	as.scriptReads(text)
	as.downloadIntoShell(text)
	as.gitEnvironment(text, rawCommandLine(a))
	return text
}

var forkBomb = lazyre.New(`(\w+|:)\s*\(\)\s*\{[^}]*\b?(\w+|:)\s*\|\s*(\w+|:)\s*&`)

func Summarize(a *command.Analysis, r Risk) string {
	if len(r.Facts) == 0 {
		prog := "the command"
		if len(a.Segments) > 0 && len(a.Segments[0].Argv) > 0 {
			prog = a.Segments[0].Argv[0]
		}
		if len(a.Segments) > 1 {
			return fmt.Sprintf("Runs %d commands (%s, ...); nothing risky found", len(a.Segments), prog)
		}
		return fmt.Sprintf("Runs %s; nothing risky found", prog)
	}
	s := r.Facts[0]
	if len(r.Facts) > 1 {
		s += "; " + r.Facts[1]
	}
	if len(r.Facts) > 2 {
		s += fmt.Sprintf(" (+%d more)", len(r.Facts)-2)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// add records a fact; a high-risk one counts as something the sandbox
// does not stop (fail closed) unless recorded with stopped.
func (as *Assessor) Add(level Level, cat Category, fact string) {
	if level == High {
		as.unstopped = true
	}
	as.record(level, cat, fact)
}

// stopped records a fact about an effect a restricted sandbox prevents.
func (as *Assessor) stopped(level Level, cat Category, fact string) {
	as.record(level, cat, fact)
}

// stoppedIf records a fact the sandbox stops when stops holds.
func (as *Assessor) stoppedIf(stops bool, level Level, cat Category, fact string) {
	if stops {
		as.stopped(level, cat, fact)
	} else {
		as.Add(level, cat, fact)
	}
}

// outsideRoots records a change to a path outside the writable roots
// (beyond). A restricted sandbox refuses it, so the fact says that first and
// then what the command does outside the sandbox: beside the dialog's "runs
// sandboxed" line a bare "deletes 8,665 files" would be untrue. why, when not
// empty, says why the sandbox refuses (the fact may say it already).
func (as *Assessor) outsideRoots(beyond bool, level Level, cat Category, why, fact string) {
	if beyond && as.confined() {
		if why != "" {
			why = " (" + why + ")"
		}
		fact = fmt.Sprintf("in the sandbox this %s is refused%s; outside it, it %s", changeNoun(fact), why, fact)
	}
	as.stoppedIf(beyond, level, cat, fact)
}

// changeNoun names the change a fact's verb makes: "deletes …" is a delete.
func changeNoun(fact string) string {
	verb, _, _ := strings.Cut(fact, " ")
	switch verb {
	case "deletes":
		return "delete"
	case "writes":
		return "write"
	case "moves":
		return "move"
	case "changes":
		return "change"
	}
	return "change"
}

// notWritable is why the sandbox refuses a change outside the roots.
const notWritable = "outside the writable roots"

// beyondSandbox: a path no sandboxed command may write (outside the
// writable roots and the temporary directories that are roots).
func (as *Assessor) beyondSandbox(p string) bool {
	if as.Inside(p) || as.scratch(p) {
		return false
	}
	// Nor a directory holding one: `rm -rf /`, `find / -delete` reach them.
	for _, r := range append(append(slices.Clone(as.roots), as.ctx.Sandbox.Workspace...), "/tmp", "/private/tmp", os.Getenv("TMPDIR")) {
		if r != "" && Within(p, filepath.Clean(r)) {
			return false
		}
	}
	return true
}

// offline: the sandbox gives the command no network of its own: off, or
// ask, where every new host goes through the proxy's own decision.
// confined reports whether the command runs in a sandbox that limits the
// filesystem at all.
func (as *Assessor) confined() bool { return as.ctx.Sandbox.Mode != sandbox.DangerFullAccess }

func (as *Assessor) offline() bool { return as.ctx.Sandbox.Network != sandbox.NetworkOn }

func (as *Assessor) record(level Level, cat Category, fact string) {
	if as.seen[fact] {
		return
	}
	as.seen[fact] = true
	if level > as.level {
		as.level = level
	}
	if cat != "" {
		as.categories[cat] = true
	}
	as.facts = append(as.facts, riskFact{level, fact})
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
