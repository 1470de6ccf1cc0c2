package risk

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/internal/lazyre"
)

// segment judges one command of the line: unwrapped, then by program.
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
