package seatbelt

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// SandboxExec is the only sandbox-exec Warden runs: an absolute path, so a
// PATH entry cannot stand in for it.
const SandboxExec = "/usr/bin/sandbox-exec"

// seatbeltBase is the fixed part of every profile: deny by default, let the
// command run and fork, touch only its own processes, and use the few
// system services ordinary command-line tools need.
const seatbeltBase = `(version 1)
(deny default)

; Processes: run, fork, and see or signal only processes in this sandbox.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; What command-line tools need from the system.
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata ipc-posix-shm-write-data ipc-posix-shm-create)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
(allow file-write-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))
(allow file-write-data (require-all (literal "/dev/zero") (vnode-type CHARACTER-DEVICE)))

`

// Spec is what a profile is made of: the policy as the launcher
// resolved it for one run.
type Spec struct {
	// Roots are the writable roots with what they hold (Policy.Roots, the
	// repositories found and the git dirs split).
	Roots []protect.Root
	// Readable are the only paths whose contents may be read (the
	// restricted read policy), besides the roots; nil: every path.
	Readable []string
	// Hidden are the paths and globs the read policy hides
	// (Policy.ReadDenyPatterns); Shown its read_allow exceptions.
	Hidden, Shown []string
	// Network is what the command may reach; ProxyPort the loopback port
	// of Warden's proxy under NetworkProxy.
	Network   Network
	ProxyPort int
}

// Network is the network a profile lets a command reach.
type Network int

const (
	NetworkOff   Network = iota // unix socketpairs only
	NetworkProxy                // Warden's proxy on the loopback, nothing else
	NetworkOn
)

// Profile is the macOS profile for spec, its writable roots resolved by the
// sandbox (the session's, whatever the command's working directory), with
// the -D parameters that fill in the paths (passing paths as parameters
// keeps quoting out of the profile). Protected subpaths (and repositories
// found in the roots) are excluded both as a literal (so a missing one
// cannot be created) and as a subpath (so nothing inside changes). The git
// dirs split by Root.Git are not among them: their data is writable, what
// git executes or obeys is not (seatbeltGit). Under NetworkProxy,
// spec.ProxyPort is the loopback port of Warden's proxy, the only place the
// command may connect to. The roots' paths are spelled as on disk
// (OnDiskRoots); every deny of a protected path or a secret also matches it
// in any letter case (FoldRegex) and comes after the allows it limits.
func Profile(spec Spec) (profile string, params []string) {
	roots := NewCaseLookup().OnDiskRoots(spec.Roots)
	var b strings.Builder
	b.WriteString(seatbeltBase)
	params = seatbeltReadable(&b, spec.Readable, roots, params)
	params = seatbeltReads(&b, spec.Hidden, spec.Shown, params)
	if len(roots) > 0 {
		b.WriteString("\n; Writes: the writable roots, minus their protected subpaths.")
		params = seatbeltWrites(&b, roots, "WRITABLE_ROOT", "GIT", params, false)
		if nested := reopenedRoots(roots); len(nested) > 0 {
			b.WriteString("\n; Roots inside a path held above (the sandbox's caches under ~/.cache, a deeper\n; home_writable entry): writable again, what lies in them held again.")
			params = seatbeltWrites(&b, nested, "NESTED_ROOT", "NESTED_GIT", params, true)
		}
	}
	seatbeltNetwork(&b, spec.Network, spec.ProxyPort)
	return b.String(), params
}

// seatbeltWrites writes the allow of roots minus what they hold, then their
// git split and the any-case deny of what they hold, each later than the
// rules it limits. rootKey and gitKey name the parameters. pinRoots keeps
// each root itself where it is (a reopened root: the path above it is
// held, so it must not be moved out, changed and moved back).
func seatbeltWrites(b *strings.Builder, roots []protect.Root, rootKey, gitKey string, params []string, pinRoots bool) []string {
	b.WriteString("\n(allow file-write*")
	for i, r := range roots {
		key := fmt.Sprintf("%s_%d", rootKey, i)
		params = append(params, fmt.Sprintf("-D%s=%s", key, r.Path))
		held := append(slices.Clone(r.Protected), r.Found...)
		// A root inside another (a workspace under /tmp or under a
		// configured root) is pinned in both: the outer root's allow would
		// let the command move it away, change what it holds under a name
		// no rule covers, and move it back.
		inner := rootsInside(r.Path, roots)
		pin := pinRoots || insideOtherRoot(r.Path, roots)
		if len(held) == 0 && !pin && len(inner) == 0 {
			fmt.Fprintf(b, "\n  (subpath (param %q))", key)
			continue
		}
		fmt.Fprintf(b, "\n  (require-all (subpath (param %q))", key)
		if pin {
			fmt.Fprintf(b, " (require-not (literal (param %q)))", key)
		}
		// The inner root and the directories between (moving /tmp/a would
		// carry /tmp/a/ws along).
		for j, in := range slices.Compact(slices.Sorted(slices.Values(append(pinnedDirs(r.Path, inner), inner...)))) {
			ik := fmt.Sprintf("%s_INNER_%d", key, j)
			params = append(params, fmt.Sprintf("-D%s=%s", ik, in))
			fmt.Fprintf(b, "\n    (require-not (literal (param %q)))", ik)
		}
		for j, prot := range held {
			pk := fmt.Sprintf("%s_PROTECTED_%d", key, j)
			params = append(params, fmt.Sprintf("-D%s=%s", pk, prot))
			fmt.Fprintf(b, "\n    (require-not (literal (param %q))) (require-not (subpath (param %q)))", pk, pk)
		}
		// The directories between the root and a deeper protected path
		// may not be renamed or removed themselves, or the command could
		// move ~/.config away and make a new ~/.config/warden. (A found
		// repository moved away stays intact; one made in its place is
		// the command's own, which the host never trusts.)
		for j, dir := range pinnedDirs(r.Path, r.Protected) {
			pk := fmt.Sprintf("%s_PINNED_%d", key, j)
			params = append(params, fmt.Sprintf("-D%s=%s", pk, dir))
			fmt.Fprintf(b, "\n    (require-not (literal (param %q)))", pk)
		}
		b.WriteString(")")
	}
	b.WriteString(")\n")
	params = seatbeltGit(b, roots, gitKey, params)
	return seatbeltProtectedFold(b, roots, params)
}

// reopenedRoots are the roots that lie inside a protected path of another
// root (the toolchain caches under a home's ~/.cache, a home_writable entry
// such as .cache/foo), as the Linux helper reopens them (reopenNested): the
// deny of that path, which comes after every allow, covers them. Each is
// returned holding what any root holds inside it (protected paths, found
// repositories, git splits), so that written again after those denies it is
// writable and they are held again. A root inside a found repository or a
// read-only git entry is left held, as the Linux helper seals those last.
// Outer first, so that a root reopened inside another stays writable.
func reopenedRoots(roots []protect.Root) []protect.Root {
	var out []protect.Root
	for _, n := range roots {
		inHeld, sealed := false, false
		for _, r := range roots {
			if r.Path == n.Path {
				continue
			}
			inHeld = inHeld || slices.ContainsFunc(r.Protected, func(p string) bool { return pathutil.Within(p, n.Path) })
			sealed = sealed || slices.ContainsFunc(r.Found, func(p string) bool { return pathutil.Within(p, n.Path) }) ||
				slices.ContainsFunc(r.Git, func(g protect.GitPath) bool { return !g.Writable && pathutil.Within(g.Path, n.Path) })
		}
		if !inHeld || sealed {
			continue
		}
		re := protect.Root{Path: n.Path}
		inside := func(p string) bool { return p != n.Path && pathutil.Within(n.Path, p) }
		for _, r := range roots {
			re.Protected = append(re.Protected, slices.DeleteFunc(slices.Clone(r.Protected), func(p string) bool { return !inside(p) })...)
			re.Found = append(re.Found, slices.DeleteFunc(slices.Clone(r.Found), func(p string) bool { return !inside(p) })...)
			re.Git = append(re.Git, slices.DeleteFunc(slices.Clone(r.Git), func(g protect.GitPath) bool { return !inside(g.Path) })...)
		}
		slices.Sort(re.Protected)
		re.Protected = slices.Compact(re.Protected)
		slices.Sort(re.Found)
		re.Found = slices.Compact(re.Found)
		out = append(out, re)
	}
	return out
}

// PlatformReadable are the system directories restricted mode lets
// every command read on macOS (resolved: /etc and /var are links into
// /private): the system, programs and libraries, Homebrew and the developer
// tools, configuration, and the directory service's and timezone data.
var PlatformReadable = []string{
	"/System", "/Library", "/usr", "/bin", "/sbin", "/opt/homebrew", "/opt/local", "/nix",
	"/Applications/Xcode.app", "/private/etc", "/private/var/db", "/private/var/select", "/dev",
}

// seatbeltReadable writes what may be read at all: everything, or under
// restricted the platform's directories, the home's shell and git
// configuration and toolchains, the workspace, the writable roots and
// readable_roots. Metadata stays readable everywhere, so paths resolve
// and the working directory can be found; contents do not.
func seatbeltReadable(b *strings.Builder, readable []string, roots []protect.Root, params []string) []string {
	if readable == nil {
		b.WriteString("; Reads: everywhere, but what the read policy hides (below).\n(allow file-read*)\n")
		return params
	}
	for _, r := range roots {
		readable = append(readable, r.Path)
	}
	b.WriteString("; Reads (restricted): the platform, the home's shell and git configuration and\n; toolchains, the workspace, the writable and readable roots; metadata anywhere.\n(allow file-read-metadata)\n(allow file-read* (literal \"/\")")
	params = subpaths(b, params, "READABLE", readable)
	b.WriteString(")\n")
	return params
}

// seatbeltReads writes the read policy's rules: a deny for each hidden path
// (as written and resolved: Seatbelt sees resolved paths, and a path that
// does not exist yet stays hidden once created), then an allow for each
// read_allow exception, which wins because it comes later.
func seatbeltReads(b *strings.Builder, pats, shown []string, params []string) []string {
	if len(pats) == 0 {
		return params
	}
	both := func(paths []string) []string {
		var out []string
		for _, path := range paths {
			out = append(out, path)
			if r := pathmemo.ResolveExisting(path); r != path {
				out = append(out, r)
			}
		}
		return slices.Compact(out)
	}
	var deny, regexes []string
	for _, pat := range pats {
		if strings.ContainsAny(pat, "*?[") {
			if re, ok := globRegex(pat); ok {
				regexes = append(regexes, re)
			}
			// Matches by their resolved paths too (and a glob Seatbelt
			// cannot take as a regex, only so).
			matches, _ := filepath.Glob(pat)
			deny = append(deny, both(matches)...)
			continue
		}
		deny = append(deny, both([]string{pat})...)
	}
	b.WriteString("\n; Reads hidden: credential stores and read_deny.\n(deny file-read*")
	params = subpaths(b, params, "READ_DENY", deny)
	// Each also in every spelling the volume takes for it (foldRegex).
	for _, re := range append(foldAll(deny), regexes...) {
		var filter string
		filter, params = regexParam(params, re)
		fmt.Fprintf(b, "\n  %s", filter)
	}
	b.WriteString(")\n")
	if allow := both(shown); len(allow) > 0 {
		b.WriteString("\n; Reads shown again: read_allow.\n(allow file-read*")
		params = subpaths(b, params, "READ_ALLOW", allow)
		b.WriteString(")\n")
	}
	return params
}

// globRegex turns a shell glob of * and ? into a Seatbelt regex matching
// the path, in every spelling (foldRegex), and everything under it, so a
// file created later is hidden too. A glob with a class, a quote or a
// backslash is not turned (ok is false).
func globRegex(glob string) (string, bool) {
	if strings.ContainsAny(glob, "[\"\\") {
		return "", false
	}
	var re strings.Builder
	re.WriteString("^")
	lit := 0
	for i, r := range glob {
		if r != '*' && r != '?' {
			continue
		}
		re.WriteString(FoldBody(glob[lit:i]))
		if r == '*' {
			re.WriteString("[^/]*")
		} else {
			re.WriteString("[^/]")
		}
		lit = i + 1
	}
	re.WriteString(FoldBody(glob[lit:]))
	re.WriteString("(/.*)?$")
	return re.String(), true
}

// seatbeltProtectedFold writes, last among the write rules so that no allow
// before it (a root, a git dir's data) wins over it, a deny of each root's
// protected paths, found repositories and pinned directories in every
// spelling the volume takes for them: the allow above excludes them as
// spelled, a case-insensitive volume also takes .GIT, .Envrc or .VSCODE.
func seatbeltProtectedFold(b *strings.Builder, roots []protect.Root, params []string) []string {
	var res []string
	for _, r := range roots {
		for _, p := range append(slices.Clone(r.Protected), r.Found...) {
			res = append(res, FoldRegex(p, true))
		}
		for _, d := range pinnedDirs(r.Path, r.Protected) {
			res = append(res, FoldRegex(d, false))
		}
	}
	if len(res) == 0 {
		return params
	}
	slices.Sort(res)
	b.WriteString("\n; Protected paths, found repositories and the directories above them, in any\n; letter case: a case-insensitive volume takes .GIT for .git.\n(deny file-write*")
	for _, re := range slices.Compact(res) {
		var filter string
		filter, params = regexParam(params, re)
		fmt.Fprintf(b, "\n  %s", filter)
	}
	b.WriteString(")\n")
	return params
}

// foldAll is the subtree foldRegex of each path.
func foldAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = FoldRegex(p, true)
	}
	return out
}

// pinnedDirs lists the directories strictly between root and each of paths.
func pinnedDirs(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if !pathutil.Within(root, p) {
			continue
		}
		for dir := filepath.Dir(p); dir != root && pathutil.Within(root, dir); dir = filepath.Dir(dir) {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Argv wraps argv in sandbox-exec.
func Argv(profile string, params []string, path string, argv []string) []string {
	out := append([]string{SandboxExec, "-p", profile}, params...)
	out = append(out, "--", path)
	return append(out, argv[1:]...)
}

// rootsInside are the roots strictly inside path.
func rootsInside(path string, roots []protect.Root) []string {
	var out []string
	for _, r := range roots {
		if r.Path != path && pathutil.Within(path, r.Path) {
			out = append(out, r.Path)
		}
	}
	return out
}

// insideOtherRoot reports whether path lies strictly inside another root.
func insideOtherRoot(path string, roots []protect.Root) bool {
	for _, r := range roots {
		if r.Path != path && pathutil.Within(r.Path, path) {
			return true
		}
	}
	return false
}

// subpaths writes a (subpath (param KEY_i)) filter for each of paths and
// adds the -DKEY_i=path parameters they name (KEY is prefix).
func subpaths(b *strings.Builder, params []string, prefix string, paths []string) []string {
	for i, p := range paths {
		key := fmt.Sprintf("%s_%d", prefix, i)
		params = append(params, fmt.Sprintf("-D%s=%s", key, p))
		fmt.Fprintf(b, "\n  (subpath (param %q))", key)
	}
	return params
}
