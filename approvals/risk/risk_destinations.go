package risk

import (
	"fmt"
	"strings"
)

// Commands that put files somewhere of their own choosing: an archive
// extracted or a repository cloned into a directory the command names, a
// program installed into a directory on PATH, a container given the host,
// a job handed to a scheduler that runs it later outside any sandbox.

// destinations records where prog's command writes beyond its operands;
// ops are its operands (flags removed).
func (as *Assessor) destinations(prog string, args, ops []string) {
	switch prog {
	case "tar", "bsdtar", "gtar":
		if tarExtracts(args) {
			if dir := optionValue(args, "-C", "--directory"); dir != "" {
				as.writes(dir, false)
			}
			if hasFlag(args, "-P", "--absolute-names") || len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsRune(args[0], 'P') {
				as.stopped(High, "", "writes outside the workspace: wherever the archive's absolute paths point ("+prog+" -P)")
			}
		}
	case "unzip":
		if dir := optionValue(args, "-d", ""); dir != "" {
			as.writes(dir, false)
		}
	case "git":
		if len(ops) >= 3 && ops[0] == "clone" && gitURLHost(ops[1]) != "" {
			as.writes(ops[2], false)
		}
		if len(ops) > 0 && ops[0] == "apply" && hasFlag(args, "--unsafe-paths") {
			as.stopped(High, "", "writes outside the workspace: wherever the patch's paths point (git apply --unsafe-paths)")
		}
	case "npm", "pnpm", "yarn":
		if hasFlag(args, "-g", "--global") && len(ops) > 0 && (ops[0] == "install" || ops[0] == "i" || ops[0] == "add" || ops[0] == "link" || ops[0] == "update") ||
			prog == "yarn" && len(ops) > 1 && ops[0] == "global" && ops[1] == "add" {
			as.stopped(Medium, SystemModification, fmt.Sprintf("installs packages globally, outside the workspace (%s %s -g)", prog, ops[0]))
		}
	case "go":
		if len(ops) > 0 && ops[0] == "install" {
			as.stopped(Medium, SystemModification, "installs programs into GOBIN (~/go/bin), on your PATH (go install)")
		}
	case "cargo":
		if len(ops) > 0 && ops[0] == "install" {
			as.stopped(Medium, SystemModification, "installs programs into ~/.cargo/bin, on your PATH (cargo install)")
		}
	case "pipx":
		if len(ops) > 0 && (ops[0] == "install" || ops[0] == "inject" || ops[0] == "upgrade") {
			as.stopped(Medium, SystemModification, "installs programs into ~/.local/bin, on your PATH (pipx "+ops[0]+")")
		}
	case "uv":
		if len(ops) > 1 && ops[0] == "tool" && (ops[1] == "install" || ops[1] == "upgrade") {
			as.stopped(Medium, SystemModification, "installs programs into ~/.local/bin, on your PATH (uv tool "+ops[1]+")")
		}
	case "pip", "pip3":
		if len(ops) > 0 && ops[0] == "install" && hasFlag(args, "--user") {
			as.stopped(Medium, SystemModification, "installs packages into your user site, outside the workspace (pip install --user)")
		}
	case "launchctl":
		if len(ops) > 0 && ops[0] != "list" && ops[0] != "print" && ops[0] != "help" && ops[0] != "version" {
			as.stopped(High, SystemModification, "changes system configuration (launchctl "+ops[0]+")")
		}
	case "at", "batch":
		if !hasFlag(args, "-l", "-c") && prog != "atq" {
			as.stopped(High, SystemModification, "schedules a command to run later, outside the sandbox ("+prog+")")
		}
	case "docker", "podman", "nerdctl":
		if len(ops) > 0 && (ops[0] == "run" || ops[0] == "create") || len(ops) > 1 && ops[0] == "container" && (ops[1] == "run" || ops[1] == "create") {
			if what := hostAccess(args); what != "" {
				as.stopped(High, PrivilegeEscalation, fmt.Sprintf("runs a container with access to the host (%s)", what))
			}
		}
	}
}

// tarExtracts says whether tar's arguments extract (x in the first word's
// letters, -x, --extract, --get).
func tarExtracts(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--extract" || a == "--get":
			return true
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || i == 0:
			if strings.ContainsRune(a, 'x') {
				return true
			}
		}
	}
	return false
}

// optionValue is the value of a short option (separate or attached) or a
// long one (separate or after =), "" when absent. For an option with no
// short form, pass the long one twice.
func optionValue(args []string, short, long string) string {
	for i, a := range args {
		switch {
		case a == short || long != "" && a == long:
			if i+1 < len(args) {
				return args[i+1]
			}
		case long != "" && strings.HasPrefix(a, long+"="):
			return a[len(long)+1:]
		case strings.HasPrefix(a, short) && len(a) > len(short) && !strings.HasPrefix(a, "--"):
			return a[len(short):]
		}
	}
	return ""
}

// hostAccess names the docker run option that hands the container the
// host, or "".
func hostAccess(args []string) string {
	for i, a := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		name, value, hasValue := strings.Cut(a, "=")
		if !hasValue {
			value = next
		}
		switch name {
		case "--privileged":
			return "--privileged"
		case "--pid", "--network", "--net", "--ipc", "--uts", "--userns":
			if value == "host" {
				return name + "=host"
			}
		case "--cap-add":
			if v := strings.ToUpper(value); v == "ALL" || v == "SYS_ADMIN" || v == "CAP_SYS_ADMIN" || v == "SYS_PTRACE" {
				return "--cap-add " + value
			}
		case "-v", "--volume", "--mount":
			src, _, _ := strings.Cut(value, ":")
			if name == "--mount" {
				for _, kv := range strings.Split(value, ",") {
					if k, v, _ := strings.Cut(kv, "="); k == "source" || k == "src" {
						src = v
					}
				}
			}
			if src == "/" || strings.HasSuffix(src, "docker.sock") || strings.HasSuffix(src, "podman.sock") {
				return name + " " + src
			}
		case "--device":
			return "--device " + value
		}
	}
	return ""
}
