package gitfacts

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/sandbox"
	"github.com/wardenhq/warden/sandbox/protect"
)

// A git command reads its repository's config (core.fsmonitor, hooks,
// aliases, filters: all run programs). The sandbox lets a command write a
// repository's data (objects, refs, the index, HEAD, rebase state) but
// keeps what git executes or obeys read-only (config, hooks, commondir...,
// missing ones masked) in a writable root's top .git and every .git that
// exists below it when a command starts, but it cannot stop a sandboxed
// command from making a new nested repository. Nor does it stop it from
// writing an interrupted rebase's todo list, whose exec lines git runs on
// --continue. So a git command is judged to use a held repository (and its
// read-only subcommands may be known-safe) only when every repository it
// could use is one the sandboxed command cannot have written: outside the
// writable roots, or inside the .git at the top of the deepest writable
// root that holds it (the workspace's own repository, its submodules and
// worktrees, whose git dirs live in .git), with no such rebase state.
// Every git command runs in the sandbox either way (no rule takes one out).

// Env reads the environment the command inherits; tests replace it.
var Env = os.Getenv

// StaysProtected reports whether every git command in a is judged to use
// only protected repositories (true when there is no git command).
func StaysProtected(a *command.Analysis, cwd string, sb sandbox.Policy) bool {
	// Everywhere a sandboxed command may have written: the writable roots
	// (the working directory when none are given, as for `warden policy
	// check`) and the temporary directories, whatever this request's mode.
	areas := slices.Clone(sb.WritableRoots)
	if len(areas) == 0 {
		areas = append(areas, cwd)
	}
	roots := ResolvedRoots(append(areas, "/tmp", os.TempDir()))
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"} {
		if v := Env(name); v != "" && usesGit(a) && !protectedConfig(absFrom(cwd, v), roots, sb.ProtectedPaths) {
			return false
		}
	}
	j := Judge{Roots: roots, protected: sb.ProtectedPaths}
	if usesGit(a) {
		for _, f := range globalConfigFiles() {
			if _, ok := j.ConfigProtected(absFrom(cwd, f), "", 0); !ok {
				return false
			}
		}
	}
	cwds := []string{cwd}
	for _, seg := range a.Segments {
		if len(seg.Argv) == 0 {
			continue
		}
		switch filepath.Base(seg.Argv[0]) {
		case "cd", "pushd", "popd":
			// Where later commands run: every place a cd could lead (a
			// subshell's cd may or may not apply), or unknown.
			if !seg.Literal || len(seg.Argv) != 2 || filepath.Base(seg.Argv[0]) == "popd" || !plainDir(seg.Argv[1]) {
				if usesGit(a) {
					return false
				}
				continue
			}
			for _, c := range cwds {
				cwds = append(cwds, absFrom(c, seg.Argv[1]))
			}
			continue
		}
		i := gitWord(seg.Argv)
		if i < 0 {
			continue
		}
		if !seg.Literal || seg.Assigns {
			return false
		}
		for _, c := range cwds {
			if !gitInvocationProtected(seg.Argv[i+1:], c, j) {
				return false
			}
		}
	}
	return true
}

// plainDir: a cd operand whose target does not depend on $HOME, $OLDPWD or
// $CDPATH.
func plainDir(d string) bool {
	if d == "" || d == "-" || strings.HasPrefix(d, "~") || strings.HasPrefix(d, "-") {
		return false
	}
	return filepath.IsAbs(d) || Env("CDPATH") == "" || strings.HasPrefix(d, "./") || strings.HasPrefix(d, "../") || d == "." || d == ".."
}

func usesGit(a *command.Analysis) bool {
	for _, seg := range a.Segments {
		if gitWord(seg.Argv) >= 0 {
			return true
		}
	}
	return false
}

// gitWord is the index of the git program among argv's words (git itself or
// behind a wrapper such as env, nice or xargs), or -1.
func gitWord(argv []string) int {
	for i, w := range argv {
		if b := filepath.Base(w); b == "git" || strings.HasPrefix(b, "git-") {
			return i
		}
	}
	return -1
}

// gitInvocationProtected judges one git command line (args after "git")
// run in cwd: its -C, --git-dir and --work-tree options and the GIT_DIR
// family of the environment decide the repository, as git does. The
// repository's config (and what it includes) and its submodules must be
// protected too.
func gitInvocationProtected(args []string, cwd string, j Judge) bool {
	roots := j.Roots
	gitDir, workTree := Env("GIT_DIR"), Env("GIT_WORK_TREE")
	// The options that name the repository, as --opt VALUE or --opt=VALUE.
	dirOpts := map[string]*string{"--git-dir": &gitDir, "--work-tree": &workTree}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		if name, val, hasVal := strings.Cut(a, "="); dirOpts[name] != nil {
			if !hasVal {
				var ok bool
				if val, ok = next(); !ok {
					return false
				}
			}
			*dirOpts[name] = val
			continue
		}
		switch {
		case a == "-C":
			d, ok := next()
			if !ok {
				return false
			}
			cwd = absFrom(cwd, d)
		case a == "-c" || a == "--namespace" || a == "--exec-path" || a == "--super-prefix" || a == "--config-env":
			next()
		case strings.HasPrefix(a, "-"):
			// --no-pager, --bare, -p...: no repository change.
		default:
			i = len(args) // the subcommand: its own options follow
		}
	}
	var dirs []string
	top, topTree := "", ""
	if gitDir != "" {
		top, topTree = absFrom(cwd, gitDir), cwd
	} else {
		// git looks for a repository from the working directory up (with
		// --work-tree alone it still finds the git dir from cwd).
		top, topTree, _ = discoverGitDir(cwd)
	}
	if workTree != "" {
		topTree = absFrom(cwd, workTree)
	}
	if top != "" {
		dirs = append(dirs, top)
	}
	if c := Env("GIT_COMMON_DIR"); c != "" {
		dirs = append(dirs, absFrom(cwd, c))
	}
	for _, d := range dirs {
		dirs = append(dirs, commonDir(d)...)
	}
	for _, d := range dirs {
		outside, gitDir, _ := gitPlace(d, roots)
		if !outside && !gitDir {
			return false
		}
		if !outside && inProgress(d) != "" {
			return false
		}
	}
	return top == "" || j.repoProtected(top, topTree, workTree != "", 0)
}

// discoverGitDir finds the repository git would use from dir: the first
// directory up holding .git (a directory, or a file naming the git dir), or
// that is itself a bare repository (no work tree).
func discoverGitDir(dir string) (gitDir, workTree string, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if st, err := os.Lstat(dotgit); err == nil {
			if st.Mode().IsRegular() {
				if t, ok := readGitfile(dotgit); ok {
					return t, d, true
				}
				return dotgit, d, true // unreadable: judge the file's place
			}
			return dotgit, d, true
		}
		if looksBare(d) {
			return d, "", true
		}
		if filepath.Dir(d) == d {
			return "", "", false
		}
	}
}

func looksBare(d string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(d, n)); err != nil {
			return false
		}
	}
	return true
}

// readGitfile reads "gitdir: PATH" from a .git file.
func readGitfile(p string) (string, bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	return absFrom(filepath.Dir(p), strings.TrimSpace(dir)), true
}

// commonDir is the repository a worktree's git dir shares its config with.
func commonDir(gitDir string) []string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return nil
	}
	return []string{absFrom(gitDir, strings.TrimSpace(string(b)))}
}

// gitDirProtected: outside every writable root, or the top .git of the
// deepest root that holds it (or that .git file's target), or a submodule's
// or linked worktree's git dir under it. The sandbox lets a command write a
// git dir's data (objects, refs, the index), so a directory below those
// (a "repository" made in .git/refs) is not protected.
func gitDirProtected(dir string, roots []string) bool {
	outside, gitDir, _ := gitPlace(dir, roots)
	return outside || gitDir
}

// gitPlace places p: outside every writable root; or a git dir the sandbox
// splits (the top .git of the deepest root holding p, a git dir under its
// modules/ or worktrees/); or inside a part of one the sandbox holds
// read-only (config, hooks, commondir...: protect.GitObeyed, and the
// modules/ and worktrees/ directories between git dirs).
func gitPlace(p string, roots []string) (outside, gitDir, readOnly bool) {
	p = resolvePath(p)
	deepest := ""
	for _, r := range roots {
		if pathWithin(r, p) && len(r) > len(deepest) {
			deepest = r
		}
	}
	if deepest == "" {
		return true, false, false
	}
	top := filepath.Join(deepest, ".git")
	if t, ok := readGitfile(top); ok {
		top = resolvePath(t)
	}
	if !pathWithin(top, p) {
		return false, false, false
	}
	rel, _ := filepath.Rel(top, p)
	parts := strings.Split(rel, string(filepath.Separator))
	if rel == "." {
		parts = nil
	}
	cur := top
	for depth := 0; ; depth++ {
		if len(parts) == 0 {
			return false, true, false
		}
		if depth > 8 {
			return false, false, false
		}
		for _, n := range protect.GitObeyed {
			np := strings.Split(n, "/")
			if len(parts) >= len(np) && slices.Equal(parts[:len(np)], np) {
				return false, false, true
			}
		}
		if !slices.Contains(protect.GitNested, parts[0]) {
			return false, false, false // data: the sandbox's to write
		}
		// Between git dirs the sandbox holds modules/ and worktrees/
		// read-only; the next git dir down is split again.
		next := filepath.Join(cur, parts[0])
		parts = parts[1:]
		for {
			if len(parts) == 0 {
				return false, false, true
			}
			next = filepath.Join(next, parts[0])
			parts = parts[1:]
			if protect.IsGitDir(next) {
				break
			}
		}
		cur = next
	}
}

// inProgress names the state of an interrupted rebase, am, cherry-pick or
// revert in a git dir: git obeys it on --continue (the todo list's exec
// lines run commands), so a host-side git must not follow a sandbox that
// could write it.
func inProgress(gitDir string) string {
	for _, n := range []string{"rebase-merge", "rebase-apply", "sequencer"} {
		if _, err := os.Lstat(filepath.Join(gitDir, n)); err == nil {
			return n
		}
	}
	return ""
}

// protectedConfig: a git config file named by the environment is outside
// the writable roots or inside a path the sandbox keeps read-only.
func protectedConfig(p string, roots, protected []string) bool {
	p = resolvePath(p)
	for _, pp := range protected {
		if pathWithin(resolvePath(pp), p) {
			return true
		}
	}
	for _, r := range roots {
		if pathWithin(r, p) {
			return false
		}
	}
	return true
}

// ResolvedRoots resolves the symbolic links in each root (in its longest
// existing prefix), so that paths compare as the file system sees them.
func ResolvedRoots(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		out = append(out, resolvePath(r))
	}
	return out
}

// resolvePath resolves symlinks in the longest existing prefix of p.
func resolvePath(p string) string {
	rest := ""
	for cur := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// pathWithin reports whether p is dir or below it.
func pathWithin(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
