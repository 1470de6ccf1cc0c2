package risk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/sandbox"
)

// Writes: redirections, copies, moves, dd and chmod, judged by where they land.

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
	if !as.Inside(p) && as.ctx.Sandbox.Mode == sandbox.ReadOnly && as.ctx.Cwd != "" && Within(as.ctx.Cwd, p) {
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
	if filepath.Dir(p) == as.ctx.Home && (strings.HasPrefix(base, ".bash") || strings.HasPrefix(base, ".zsh") || base == ".profile" || base == ".gitconfig") {
		return true
	}
	return strings.HasPrefix(p, filepath.Join(as.ctx.Home, ".ssh")+"/") || strings.HasPrefix(p, filepath.Join(as.ctx.Home, ".config", "autostart")+"/")
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
